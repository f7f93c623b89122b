// Tiling of the fused causal attention kernels (flash_attention.cu): the
// constexpr config and the shared-memory layout derived from it. Private to
// that file. Letters: s sequence, d head dim, D = DMAX (d rounded up to 32, 64
// or 128), Br query rows and Bc key rows of a tile.
#pragma once
#include <cstddef>

namespace ptdp::cuda::flash {

struct FlashConfig {
  static constexpr int kWarpSize = 32;
  static constexpr int kWarps = 4;                         // warps per block
  static constexpr int kThreads = kWarps * kWarpSize;      // 128 threads per block
  static constexpr int kBr = 32;                           // query rows per tile
  static constexpr int kBc = kWarpSize;                    // key rows per tile: lane j owns key column j of a score tile
  static constexpr int kRowsPerWarp = kBr / kWarps;        // query rows (score phases) or key rows (dK, dV) per warp
  static constexpr int kMaxHeadDim = 128;                  // largest supported d
  static constexpr int kPad = 4;                           // floats after each smem row (see FlashTiles::kStride)
  static constexpr int kStaticSmemBytes = 48 * 1024;       // above this, dynamic smem needs an explicit opt-in
  // Backward blocks per SM promised to ptxas: without it, sm_80 aims at 3 blocks
  // (168 registers) and spills at D = 128, where shared memory allows only 2 anyway.
  static constexpr int kBwdMinBlocks = 2;
  static constexpr int kMaxGridY = 65535;                  // tiles along s go in gridDim.y
  static constexpr int kElementwiseThreads = 256;          // the small D and dQ-conversion kernels
  static constexpr int kElementwiseMaxBlocks = 1 << 16;    // grid-stride beyond this

  static_assert(kBc == kWarpSize, "score phases map one key column to one lane");
  static_assert(kBr == kBc, "tiles are square: the backward's first query tile is the key tile's index");
  static_assert(kRowsPerWarp % 4 == 0, "rows of a warp are read as float4");
};

// Shared-memory layout for head dims up to DMAX; every region starts on a
// 16-byte boundary (all offsets are multiples of 4 floats), so rows are read as float4.
template <int DMAX>
struct FlashTiles {
  static_assert(DMAX % 32 == 0 && DMAX <= FlashConfig::kMaxHeadDim, "DMAX is 32, 64, 96 or 128");
  using C = FlashConfig;
  // Floats per row of a (rows, DMAX) tile. With DMAX + 4, the float4 at column e of
  // row j lies in 16-byte bank group (j·(DMAX/4 + 1) + e/4) mod 8: the 8 lanes of a
  // quarter-warp reading rows j..j+7 hit 8 different groups (no bank conflict).
  static constexpr int kStride = DMAX + C::kPad;
  static constexpr int kRowTile = C::kBr * kStride;  // one (Br or Bc, DMAX) tile of Q, K, V or dO
  static constexpr int kScoreTile = C::kBr * C::kBc;  // one (Br, Bc) tile of P or dS

  // Forward: Q, K, V tiles, then P.
  static constexpr int kFwdFloats = 3 * kRowTile + kScoreTile;
  // Backward: K, V (fixed per block), Q, dO (per query tile), P, dS, then lse and D of the query rows.
  static constexpr int kBwdFloats = 4 * kRowTile + 2 * kScoreTile + 2 * C::kBr;
  static constexpr std::size_t kFwdBytes = sizeof(float) * kFwdFloats;
  static constexpr std::size_t kBwdBytes = sizeof(float) * kBwdFloats;
  static_assert(kRowTile % 4 == 0 && kScoreTile % 4 == 0, "regions stay 16-byte aligned");
};

}  // namespace ptdp::cuda::flash
