// ptdp_config_fields: writes what the field tables generate (core/config/field_docs.h),
// docs/config-fields.md and fuzz/ptdp.dict's generated section, into a source tree.
//   ptdp_config_fields           prints docs/config-fields.md
//   ptdp_config_fields --write [SOURCE_DIR]   rewrites both (SOURCE_DIR: this build's source tree)
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "core/config/field_docs.h"
#include "core/io/read_file.h"
#include "core/io/staged_file.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode.empty()) {
    std::fputs(ptdp::config_fields_markdown().c_str(), stdout);
    return 0;
  }
  if (mode != "--write" || argc > 3) {
    std::fprintf(stderr, "usage: ptdp_config_fields [--write [SOURCE_DIR]]\n");
    return 2;
  }
  const std::filesystem::path root = argc == 3 ? argv[2] : PTDP_SOURCE_DIR;
  const auto docs = root / "docs" / "config-fields.md", dict = root / "fuzz" / "ptdp.dict";
  try {
    const auto bytes = ptdp::read_regular_file(dict);
    ptdp::write_file_atomic(docs, ptdp::config_fields_markdown());
    ptdp::write_file_atomic(dict, ptdp::dict_with_config_fields(std::string(bytes.begin(), bytes.end())));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp_config_fields: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %s and %s\n", docs.c_str(), dict.c_str());
  return 0;
}
