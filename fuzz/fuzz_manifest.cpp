// libFuzzer target: a checkpoint manifest, read as `ptdp train --load` and
// `ptdp export --load` read it (the strict JSON reader, manifest_from_json:
// pieces, splits, ranges and coverage checked), then every accepted piece
// placed by its geometry as the loader places it (Param::full_index, which
// divided by a part of zero rows before the split was checked). A refusal is
// JsonRefused; anything else that escapes (another exception, a division by
// zero, an index outside the parameter, a sanitizer report) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/checkpoint/manifest.h"
#include "core/config/json_read.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptdp;
  try {
    const Manifest m = manifest_from_json(parse_json(fuzz::as_text(data, size), "fuzz-manifest"), "fuzz-manifest");
    for (const ShardRecord& r : m.shards)
      for (const ShardPiece& piece : r.pieces) {
        if (piece.count == 0) continue;
        const Param where = piece.geometry();
        for (const std::int64_t local : {piece.offset, piece.offset + piece.count - 1}) {
          const std::int64_t full = where.full_index(local);
          if (full < 0 || full >= shape_numel(piece.full_shape)) std::abort();  // the loader would write outside
        }
      }
    (void)to_json(m).dump();
  } catch (const JsonRefused&) {
  }
  return 0;
}
