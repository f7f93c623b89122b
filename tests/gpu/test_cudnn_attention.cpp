// GPU tests of causal attention, bf16 and fp16: cuDNN's SDPA (cudnn_attention.h)
// forward (out, stats) and backward (dqkv) against the fp32 CPU reference
// (core/kernels/cpu/attention.h) on shapes with s not a multiple of 64 and d in
// {64, 80, 128}; the unfused path of CudaOps against the same reference, and
// the two paths in agreement; deterministic backward bit for bit twice; one
// graph built per key. Skipped without a GPU (and, for cuDNN, without cuDNN).
// Letters: b micro-batch, s sequence, a heads, d head dim; qkv (b, s, a, 3, d),
// out (b, s, a, d), stats (b, a, s).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/kernels/cpu/attention.h"
#include "core/kernels/cuda/cudnn_attention.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::TypeNames;
using gputest::Types16;

struct Dims {
  std::int64_t b, s, a, d;
  std::int64_t qkv() const { return b * s * a * 3 * d; }
  std::int64_t out() const { return b * s * a * d; }
  std::int64_t stats() const { return b * a * s; }
};
// s = 100, 129, 257 end inside a 64-row tile; d = 80 is not a power of two.
constexpr Dims kShapes[] = {{1, 100, 2, 64}, {2, 129, 3, 80}, {1, 129, 2, 128}, {2, 64, 1, 64}, {1, 257, 2, 128}};

std::string name(const char* what, const Dims& x) {
  return std::string(what) + " (b " + std::to_string(x.b) + ", s " + std::to_string(x.s) + ", a " +
         std::to_string(x.a) + ", d " + std::to_string(x.d) + ")";
}

// The CPU reference: out, dqkv in fp32 from inputs exact in T.
struct Reference {
  std::vector<float> qkv, dout, out, dqkv;
};

template <class T> Reference reference(const Dims& x, unsigned seed) {
  std::mt19937 rng(seed);
  Reference r;
  r.qkv = gputest::random_values<T>(rng, x.qkv());
  r.dout = gputest::random_values<T>(rng, x.out());
  r.out.resize(x.out()), r.dqkv.resize(x.qkv());
  std::vector<float> probs(x.b * x.a * x.s * x.s);
  cpu::attention_forward(r.qkv.data(), x.b, x.s, x.a, x.d, r.out.data(), probs.data());
  cpu::attention_backward(r.dout.data(), r.qkv.data(), probs.data(), x.b, x.s, x.a, x.d, r.dqkv.data());
  return r;
}

// Slot c (0 q, 1 k, 2 v) of a (b, s, a, 3, d) tensor as (b, s, a, d).
std::vector<float> slot(const std::vector<float>& packed, const Dims& x, int c) {
  std::vector<float> out(x.out());
  for (std::int64_t row = 0; row < x.b * x.s * x.a; ++row)
    std::copy_n(packed.begin() + (row * 3 + c) * x.d, x.d, out.begin() + row * x.d);
  return out;
}

template <class T> void expect_dqkv(const std::vector<float>& got, const std::vector<float>& ref, const Dims& x) {
  const char* names[] = {"dq", "dk", "dv"};
  for (int c = 0; c < 3; ++c)
    gputest::expect_close<T>(slot(got, x, c), slot(ref, x, c), gputest::attention_grad<T>(double(x.s), double(x.d)),
                             names[c]);
}

template <class T> constexpr DType dtype_of() { return std::is_same_v<T, __nv_bfloat16> ? DType::bf16 : DType::f16; }

template <class T> class CudnnAttentionTest : public ::testing::Test {};
TYPED_TEST_SUITE(CudnnAttentionTest, Types16, TypeNames);

#ifdef PTDP_HAVE_CUDNN
#define PTDP_REQUIRE_CUDNN() PTDP_REQUIRE_GPU()
#else
#define PTDP_REQUIRE_CUDNN() GTEST_SKIP() << "built without cuDNN: cuDNN attention test skipped"
#endif

#ifdef PTDP_HAVE_CUDNN
// stats[ib, ih, t] = log Σ_{u ≤ t} exp(q_t·k_u / sqrt(d)), in double.
std::vector<float> stats_reference(const std::vector<float>& qkv, const Dims& x) {
  std::vector<float> stats(x.stats());
  std::vector<double> z(x.s);
  const double scale = 1.0 / std::sqrt(static_cast<double>(x.d));
  for (std::int64_t ib = 0; ib < x.b; ++ib)
    for (std::int64_t ih = 0; ih < x.a; ++ih) {
      const auto at = [&](std::int64_t t, int c) { return &qkv[((ib * x.s + t) * x.a + ih) * 3 * x.d + c * x.d]; };
      for (std::int64_t t = 0; t < x.s; ++t) {
        double mx = -INFINITY, sum = 0;
        for (std::int64_t u = 0; u <= t; ++u) {
          double dot = 0;
          for (std::int64_t e = 0; e < x.d; ++e) dot += static_cast<double>(at(t, 0)[e]) * at(u, 1)[e];
          z[u] = dot * scale;
          mx = std::max(mx, z[u]);
        }
        for (std::int64_t u = 0; u <= t; ++u) sum += std::exp(z[u] - mx);
        stats[(ib * x.a + ih) * x.s + t] = static_cast<float>(mx + std::log(sum));
      }
    }
  return stats;
}

void expect_no_cuda_error() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a kernel failed while running"; }

// One forward and backward through cuda::CudnnAttention on device buffers.
struct CudnnRun {
  std::vector<float> out, stats, dqkv;
};

template <class T>
CudnnRun run_cudnn(cuda::CudnnAttention& sdpa, const Dims& x, const Reference& r, bool deterministic) {
  const cuda::SdpaKey key{x.b, x.s, x.a, x.d, dtype_of<T>(), deterministic};
  DeviceBuffer<T> qkv(gputest::to_type<T>(r.qkv)), dout(gputest::to_type<T>(r.dout)), out(x.out()), dqkv(x.qkv());
  DeviceBuffer<float> stats(x.stats());
  DeviceBuffer<std::uint8_t> fwd_ws(sdpa.forward_workspace_bytes(key)), bwd_ws(sdpa.backward_workspace_bytes(key));
  sdpa.forward(key, qkv.get(), out.get(), stats.get(), fwd_ws.get());
  sdpa.backward(key, qkv.get(), out.get(), dout.get(), stats.get(), dqkv.get(), bwd_ws.get());
  expect_no_cuda_error();
  return {gputest::got(out), stats.download(), gputest::got(dqkv)};
}

TYPED_TEST(CudnnAttentionTest, ForwardAndBackwardMatchTheCpuReference) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  for (const Dims& x : kShapes) {
    SCOPED_TRACE(name("cuDNN", x));
    const Reference r = reference<T>(x, static_cast<unsigned>(7 + x.s * 131 + x.d));
    const CudnnRun g = run_cudnn<T>(sdpa, x, r, false);
    gputest::expect_close<T>(g.out, r.out, gputest::attention_out<T>(double(x.s)), "out");
    gputest::expect_close<float>(g.stats, stats_reference(r.qkv, x),
                                 gputest::attention_stats(double(x.s), double(x.d)), "stats");
    expect_dqkv<T>(g.dqkv, r.dqkv, x);
  }
}

// Deterministic mode: the same inputs give the same dqkv bit for bit.
TYPED_TEST(CudnnAttentionTest, DeterministicBackwardIsBitwiseRepeatable) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  const Dims x{2, 257, 4, 64};  // several key tiles per query block: dQ sums in a fixed order
  const Reference r = reference<T>(x, 91);
  const CudnnRun first = run_cudnn<T>(sdpa, x, r, true), second = run_cudnn<T>(sdpa, x, r, true);
  ASSERT_EQ(first.dqkv.size(), second.dqkv.size());
  EXPECT_EQ(std::memcmp(first.dqkv.data(), second.dqkv.data(), first.dqkv.size() * sizeof(float)), 0);
  expect_dqkv<T>(first.dqkv, r.dqkv, x);
}

// A repeated key reuses its graphs; a new shape or the deterministic flag builds new ones.
TYPED_TEST(CudnnAttentionTest, GraphsAreBuiltOncePerKey) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  const Dims x{1, 100, 2, 64};
  const Reference r = reference<T>(x, 5);
  run_cudnn<T>(sdpa, x, r, false);
  EXPECT_EQ(sdpa.graphs_built(), 2);  // forward and backward
  run_cudnn<T>(sdpa, x, r, false);
  EXPECT_EQ(sdpa.graphs_built(), 2);
  const cuda::SdpaKey key{x.b, x.s, x.a, x.d, dtype_of<T>(), true};
  sdpa.backward_workspace_bytes(key);
  EXPECT_EQ(sdpa.graphs_built(), 3);
  sdpa.forward_workspace_bytes(cuda::SdpaKey{x.b, 129, x.a, x.d, dtype_of<T>(), false});
  EXPECT_EQ(sdpa.graphs_built(), 4);
}
#endif

// --- through CudaOps: the unfused (paper's) path, and cuDNN against it ----------------

// out and dqkv of the backend's attention forward then backward.
std::pair<std::vector<float>, std::vector<float>> run_ops(gputest::Gpu& g, const Reference& r, const Dims& x) {
  const DType t = g.ops.compute_dtype();
  const Shape qkv_shape{x.b, x.s, 3 * x.a * x.d};
  Tensor qkv = g.upload(r.qkv, qkv_shape, t), dout = g.upload(r.dout, {x.b, x.s, x.a * x.d}, t);
  Tensor out = g.ops.empty({x.b, x.s, x.a * x.d}), dqkv = g.ops.empty(qkv_shape);
  Tensor saved = g.ops.attention_forward(qkv, static_cast<int>(x.a), out);
  g.ops.attention_backward(dout, qkv, out, saved, static_cast<int>(x.a), dqkv);
  return {g.download(out), g.download(dqkv)};
}

TYPED_TEST(CudnnAttentionTest, UnfusedPathMatchesTheCpuReference) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  for (const Dims& x : kShapes)
    for (const bool fused_ops : {true, false}) {
      SCOPED_TRACE(name(fused_ops ? "unfused attention, fused softmax" : "unfused attention, unfused softmax", x));
      gputest::Gpu g(dtype_of<T>(), fused_ops, Attention::unfused);
      const Reference r = reference<T>(x, static_cast<unsigned>(3 + x.s + x.d));
      const auto [out, dqkv] = run_ops(g, r, x);
      gputest::expect_close<T>(out, r.out, gputest::attention_out<T>(double(x.s)), "out");
      expect_dqkv<T>(dqkv, r.dqkv, x);
    }
}

// cuDNN and the unfused path agree within the sum of their tolerances to the reference.
TYPED_TEST(CudnnAttentionTest, CudnnAndUnfusedAgree) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  for (const Dims& x : {Dims{2, 129, 3, 80}, Dims{1, 257, 2, 128}}) {
    SCOPED_TRACE(name("cuDNN vs unfused", x));
    const Reference r = reference<T>(x, 17);
    gputest::Gpu fast(dtype_of<T>(), true, Attention::flash), paper(dtype_of<T>(), true, Attention::unfused);
    const auto [out_fast, dqkv_fast] = run_ops(fast, r, x);
    const auto [out_paper, dqkv_paper] = run_ops(paper, r, x);
    const auto twice = [](gputest::Tolerance t) { return gputest::Tolerance{2 * t.atol, 2 * t.rtol}; };
    gputest::expect_close<T>(out_fast, out_paper, twice(gputest::attention_out<T>(double(x.s))), "out");
    gputest::expect_close<T>(dqkv_fast, dqkv_paper, twice(gputest::attention_grad<T>(double(x.s), double(x.d))),
                             "dqkv");
  }
}

}  // namespace
}  // namespace ptdp
