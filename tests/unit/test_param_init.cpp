// Philox4x32-10 against the published known answers, and the parameter
// initialisation built on it: sharded parameters reassemble the unsharded one
// exactly, and the values have the requested mean, std and normal shape.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/param.h"
#include "core/tensor/philox.h"

namespace ptdp {
namespace {

// Random123 1.14, tests/kat_vectors, the three "philox4x32 10" lines: counter (4
// words), key (2 words), expected output (4 words).
struct Kat {
  philox::Counter ctr;
  philox::Key key;
  philox::Counter expected;
};
const Kat kKats[] = {
    {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
    {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
     {{0xffffffff, 0xffffffff}},
     {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
    {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
     {{0xa4093822, 0x299f31d0}},
     {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
};

TEST(Philox, MatchesTheRandom123KnownAnswers) {
  for (const Kat& k : kKats) {
    const philox::Counter got = philox::philox4x32_10(k.ctr, k.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.w[i], k.expected.w[i]) << "word " << i << " of ctr " << std::hex << k.ctr.w[0];
  }
}

std::vector<float> values(CpuOps& ops, const Param& p) {
  std::vector<float> v(static_cast<std::size_t>(p.value.numel()));
  ops.download_f32(p.value, v.data());
  return v;
}

// Full index of element (i0, i1, i2) of part `rank` of a (4, 6, 10) tensor split
// in 2 along `dim`, by explicit multi-index arithmetic (not Param::full_index).
std::size_t full_at(int dim, int rank, std::int64_t local) {
  std::int64_t shape[3] = {4, 6, 10};
  shape[dim] /= 2;
  std::int64_t idx[3] = {local / (shape[1] * shape[2]), (local / shape[2]) % shape[1], local % shape[2]};
  idx[dim] += rank * shape[dim];
  return static_cast<std::size_t>((idx[0] * 6 + idx[1]) * 10 + idx[2]);
}

// A (4, 6, 10) parameter split in 2 along each dim in turn: each shard's
// element equals the unsharded one at its full index, bit for bit.
TEST(ParamInit, ShardsReassembleTheUnshardedParameterExactly) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  const Shape full{4, 6, 10};
  const auto whole = make_param(ops, "layers.0.qkv.weight", full, {}, Init::normal, 0.02f, 1234, true);
  const std::vector<float> ref = values(ops, *whole);
  for (int dim : {0, 1, 2}) {
    std::vector<int> hits(ref.size(), 0);
    for (int rank = 0; rank < 2; ++rank) {
      const auto shard = make_param(ops, "layers.0.qkv.weight", full, {dim, 2, rank}, Init::normal, 0.02f, 1234, true);
      const std::vector<float> got = values(ops, *shard);
      ASSERT_EQ(got.size(), ref.size() / 2);
      for (std::size_t i = 0; i < got.size(); ++i) {
        const std::size_t at = full_at(dim, rank, static_cast<std::int64_t>(i));
        EXPECT_EQ(static_cast<std::size_t>(shard->full_index(static_cast<std::int64_t>(i))), at);
        ASSERT_LT(at, ref.size());
        ++hits[at];
        EXPECT_EQ(got[i], ref[at]) << "dim " << dim << " rank " << rank << " element " << i;
      }
    }
    for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i], 1) << "dim " << dim << ": full element " << i;
  }
}

TEST(ParamInit, MakeParamFillsTheValuesOfInitValue) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  const auto p = make_param(ops, "embedding.wte", {8, 6}, {0, 2, 1}, Init::normal, 0.5f, 7, true);
  const std::vector<float> got = values(ops, *p);
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], init_value(7, "embedding.wte", p->full_index(static_cast<std::int64_t>(i)), Init::normal, 0.5f));
  const auto ones = make_param(ops, "ln.weight", {5}, {}, Init::ones, 0, 7, false);
  const auto zeros = make_param(ops, "ln.bias", {5}, {}, Init::zeros, 0, 7, false);
  EXPECT_EQ(values(ops, *ones), std::vector<float>(5, 1.0f));
  EXPECT_EQ(values(ops, *zeros), std::vector<float>(5, 0.0f));
  EXPECT_NE(init_value(7, "a", 0, Init::normal, 1), init_value(7, "b", 0, Init::normal, 1));  // per-name keys
  EXPECT_NE(init_value(7, "a", 0, Init::normal, 1), init_value(8, "a", 0, Init::normal, 1));  // per-seed keys
}

// n = 49152 draws of N(0, σ²), σ = 0.02. With 6-sigma bounds (a false failure
// has probability ~1e-9 per check): the sample mean has std σ/√n, so |mean| ≤
// 6σ/√n ≈ 0.027σ; the sample std has std ≈ σ/√(2n), so |s − σ| ≤ 6σ/√(2n) ≈
// 0.019σ; the fraction within ±σ is binomial around 0.6827 with std
// √(p(1−p)/n) ≈ 0.0021, bound 6 of those (a uniform or a wrong scale fails it).
TEST(ParamInit, NormalValuesHaveTheRequestedMeanStdAndShape) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  const float sigma = 0.02f;
  const auto p = make_param(ops, "layers.1.fc1.weight", {256, 192}, {}, Init::normal, sigma, 42, true);
  const std::vector<float> v = values(ops, *p);
  const double n = static_cast<double>(v.size());
  double sum = 0, sum_sq = 0, within = 0;
  for (float x : v) sum += x, sum_sq += static_cast<double>(x) * x, within += std::abs(x) <= sigma ? 1 : 0;
  const double mean = sum / n, std = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_LE(std::abs(mean), 6 * sigma / std::sqrt(n));
  EXPECT_LE(std::abs(std - sigma), 6 * sigma / std::sqrt(2 * n));
  const double p1 = 0.682689492137;  // P(|Z| ≤ 1)
  EXPECT_LE(std::abs(within / n - p1), 6 * std::sqrt(p1 * (1 - p1) / n));
}

}  // namespace
}  // namespace ptdp
