// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw
// ("Parallel random numbers: as easy as 1, 2, 3", SC 2011): four 32-bit outputs
// as a pure function of a 128-bit counter and a 64-bit key, so any element of a
// stream can be computed alone, on the host or on a GPU, with the same bits.
// One definition for both: __host__ __device__ when compiled by nvcc.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define PTDP_HOST_DEVICE __host__ __device__
#else
#define PTDP_HOST_DEVICE
#endif

namespace ptdp::philox {

struct Counter {
  std::uint32_t w[4];
};
struct Key {
  std::uint32_t w[2];
};

// The round multipliers and the Weyl key increments (golden ratio, sqrt(3) − 1) of the paper.
inline constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

// One round: two 32×32→64 products, their high halves mixed with the key and
// the other counter words, the words permuted.
PTDP_HOST_DEVICE inline Counter one_round(Counter c, Key k) {
  const std::uint64_t p0 = static_cast<std::uint64_t>(kMul0) * c.w[0];
  const std::uint64_t p1 = static_cast<std::uint64_t>(kMul1) * c.w[2];
  const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
  const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
  return Counter{{hi1 ^ c.w[1] ^ k.w[0], lo1, hi0 ^ c.w[3] ^ k.w[1], lo0}};
}

// Ten rounds, the key bumped by the Weyl increments between rounds.
PTDP_HOST_DEVICE inline Counter philox4x32_10(Counter c, Key k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k = Key{{k.w[0] + kWeyl0, k.w[1] + kWeyl1}};
    c = one_round(c, k);
  }
  return c;
}

}  // namespace ptdp::philox
