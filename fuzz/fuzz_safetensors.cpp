// libFuzzer target: a safetensors file (a checkpoint shard, or the weights of
// `ptdp train --init-hf`), checked by SafetensorsFile as the commands read it
// (header length, strict JSON header, dtypes, shapes without overflow,
// offsets inside the data and not overlapping), then every float tensor read.
// A refusal is SafetensorsError; anything else that escapes (another
// exception, a read outside the bytes, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/checkpoint/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const SafetensorsFile file("fuzz.safetensors", std::vector<std::uint8_t>(data, data + size));
    for (const auto& [name, entry] : file.entries())
      if (entry.dtype != DType::i32) (void)file.read_f32(name);
  } catch (const SafetensorsError&) {
  }
  return 0;
}
