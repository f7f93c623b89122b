// GPU tests of the embedding CUDA kernels (embedding.cu), bf16 and fp16,
// against the fp32 CPU reference (core/kernels/cpu/embedding.h).
// Letters: b micro-batch, s sequence, n = b·s tokens, h hidden, Vt shard rows
// [vocab_start, +Vt). Tokens repeat (Vt < n) and some fall outside the shard.
// The deterministic backward is tested on the scalar path (h not a multiple of
// 8; an unaligned dout view), the 128-bit path, and thousands of repeats of
// each token, and must give the same bits twice.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/embedding.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::OffsetBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

template <class T> class CudaEmbedding : public ::testing::Test {};
TYPED_TEST_SUITE(CudaEmbedding, Types16, TypeNames);

constexpr std::int64_t kB = 3, kS = 33, kN = kB * kS, kH = 300;  // h > one block of threads
constexpr std::int64_t kVocabStart = 22, kVt = 11;
constexpr std::int64_t kWpeRows = kS + 2;  // wpe holds at least s rows

// n tokens in [vocab_start − 5, vocab_start + Vt + 5): mostly in the shard, repeating.
std::vector<std::int32_t> random_tokens(std::mt19937& rng, std::int64_t n = kN) {
  constexpr auto first = static_cast<std::int32_t>(kVocabStart), end = static_cast<std::int32_t>(kVocabStart + kVt);
  std::uniform_int_distribution<std::int32_t> dist(first - 5, end + 4);
  std::vector<std::int32_t> tokens(n);
  for (auto& t : tokens) t = dist(rng);
  tokens[0] = first - 1;  // just outside
  tokens[1] = end;
  tokens[2] = first;  // first and last row, repeated
  tokens[3] = end - 1;
  tokens[4] = first;
  tokens[5] = first;
  return tokens;
}

TYPED_TEST(CudaEmbedding, ForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(301);
  const auto tokens = random_tokens(rng);
  const auto wte = gputest::random_values<T>(rng, kVt * kH);
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  DeviceBuffer<T> d_wte(gputest::to_type<T>(wte)), d_out(kN * kH);
  cuda::embedding_forward(d_tokens.get(), kN, d_wte.get(), kVocabStart, kVt, kH, d_out.get(), nullptr);
  std::vector<float> ref(kN * kH);
  cpu::embedding_forward(tokens.data(), kN, wte.data(), kVocabStart, kVt, kH, ref.data());
  gputest::expect_close<T>(got(d_out), ref, gputest::elementwise<T>(), "embedding_forward out");
}

// dwte starts non-zero: rows are added (+=), repeated tokens add up.
TYPED_TEST(CudaEmbedding, BackwardAccumulatesLikeCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(302);
  const auto tokens = random_tokens(rng);
  const auto dout = gputest::random_values<T>(rng, kN * kH);
  const auto dwte0 = gputest::random_values<float>(rng, kVt * kH);
  DeviceBuffer<std::int32_t> d_tokens(tokens);
  DeviceBuffer<T> d_dout(gputest::to_type<T>(dout));
  DeviceBuffer<float> d_dwte(dwte0);
  cuda::embedding_backward(d_tokens.get(), kN, d_dout.get(), kVocabStart, kVt, kH, d_dwte.get(), nullptr);
  std::vector<float> ref = dwte0;
  cpu::embedding_backward(tokens.data(), kN, dout.data(), kVocabStart, kVt, kH, ref.data());
  // At most n rows add into one dwte row.
  gputest::expect_close<float>(got(d_dwte), ref, gputest::fp32_reduction(kN), "embedding_backward dwte");
}

// Deterministic backward: n tokens of width h; offset: elements between an
// aligned allocation and row 0 of dout.
struct Case {
  std::int64_t n, h;
  std::size_t offset;
};
constexpr Case kDeterministicCases[] = {
    {kN, kH, 0},    // scalar: h = 300 not a multiple of 8
    {kN, 256, 0},   // 128-bit accesses
    {kN, 256, 1},   // unaligned view: scalar
    {16400, 64, 0}, // more tokens than the 16384-block grid; ~1500 repeats a token
};

// dwte starts non-zero; matches the CPU within the reduction tolerance, and a
// second run from the same start gives the same bits.
TYPED_TEST(CudaEmbedding, DeterministicBackwardMatchesCpuAndRepeats) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(305);
  for (const Case c : kDeterministicCases) {
    const auto tokens = random_tokens(rng, c.n);
    const auto dout = gputest::random_values<T>(rng, c.n * c.h);
    const auto dwte0 = gputest::random_values<float>(rng, kVt * c.h);
    DeviceBuffer<std::int32_t> d_tokens(tokens);
    OffsetBuffer<T> d_dout(gputest::to_type<T>(dout), c.offset);
    std::vector<float> runs[2];
    for (auto& run : runs) {
      DeviceBuffer<float> d_dwte(dwte0);
      cuda::embedding_backward_deterministic(d_tokens.get(), c.n, d_dout.get(), kVocabStart, kVt, c.h, d_dwte.get(),
                                             nullptr);
      run = d_dwte.download();
    }
    std::vector<float> ref = dwte0;
    cpu::embedding_backward(tokens.data(), c.n, dout.data(), kVocabStart, kVt, c.h, ref.data());
    const std::string what = "embedding_backward_deterministic (n " + std::to_string(c.n) + ", h " +
                             std::to_string(c.h) + ", offset " + std::to_string(c.offset) + ")";
    gputest::expect_close<float>(runs[0], ref, gputest::fp32_reduction(static_cast<double>(c.n)), what);
    gputest::expect_bitwise_equal(runs[0], runs[1], what + " run to run");
  }
}

TYPED_TEST(CudaEmbedding, PositionForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(303);
  const auto wpe = gputest::random_values<T>(rng, kWpeRows * kH);
  const auto x = gputest::random_values<T>(rng, kN * kH);
  DeviceBuffer<T> d_wpe(gputest::to_type<T>(wpe)), d_x(gputest::to_type<T>(x));
  cuda::position_forward(d_wpe.get(), kB, kS, kH, d_x.get(), nullptr);
  std::vector<float> ref = x;
  cpu::position_forward(wpe.data(), kB, kS, kH, ref.data());
  gputest::expect_close<T>(got(d_x), ref, gputest::elementwise<T>(), "position_forward x");
}

// dwpe (s + 2 rows) starts non-zero: the first s rows get += Σ_b dx, the rest
// stay. One thread per (position, feature) sums over b in order: no atomics,
// so it is deterministic as it stands.
TYPED_TEST(CudaEmbedding, PositionBackwardAccumulatesLikeCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(304);
  const auto dx = gputest::random_values<T>(rng, kN * kH);
  const auto dwpe0 = gputest::random_values<float>(rng, kWpeRows * kH);
  DeviceBuffer<T> d_dx(gputest::to_type<T>(dx));
  DeviceBuffer<float> d_dwpe(dwpe0);
  cuda::position_backward(d_dx.get(), kB, kS, kH, d_dwpe.get(), nullptr);
  std::vector<float> ref = dwpe0;
  cpu::position_backward(dx.data(), kB, kS, kH, ref.data());
  gputest::expect_close<float>(got(d_dwpe), ref, gputest::fp32_reduction(kB), "position_backward dwpe");
}

}  // namespace
}  // namespace ptdp
