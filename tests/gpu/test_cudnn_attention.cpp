// GPU tests of causal attention with grouped-query attention, bf16 and fp16:
// cuDNN's SDPA (cudnn_attention.h) forward (out, stats) and backward (dq, dkv)
// against the CPU backend's attention (CpuOps, fp32) on shapes with s not a
// multiple of 64, d in {64, 80, 128} and g = a, g < a and g = 1; the unfused
// path of CudaOps against the same reference, and the two paths in agreement;
// deterministic backward bit for bit twice; one graph built per key. Skipped
// without a GPU (and, for cuDNN, without cuDNN).
// Letters: b micro-batch, s sequence, a query heads, g kv heads, r = a/g, d
// head dim; q, dq, out (b, s, a, d), kv, dkv (b, s, g, 2, d), stats (b, a, s).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/cuda/cudnn_attention.h"
#include "tests/gpu/cpu_reference.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::TypeNames;
using gputest::Types16;

struct Dims {
  std::int64_t b, s, a, g, head_dim;
  std::int64_t q() const { return b * s * a * head_dim; }
  std::int64_t kv() const { return b * s * g * 2 * head_dim; }
  std::int64_t stats() const { return b * a * s; }
  Shape q_shape() const { return {b, s, a, head_dim}; }
  Shape kv_shape() const { return {b, s, g, 2, head_dim}; }
};
// s = 100, 129, 257 end inside a 64-row tile; d = 80 is not a power of two;
// g = a (multi-head), g < a (grouped-query) and g = 1 (multi-query).
constexpr Dims kShapes[] = {{1, 100, 2, 2, 64}, {2, 129, 6, 3, 80}, {1, 129, 4, 1, 128}, {2, 64, 2, 2, 64},
                            {1, 257, 8, 2, 128}};

std::string name(const char* what, const Dims& x) {
  return std::string(what) + " (b " + std::to_string(x.b) + ", s " + std::to_string(x.s) + ", a " +
         std::to_string(x.a) + ", g " + std::to_string(x.g) + ", d " + std::to_string(x.head_dim) + ")";
}

// Inputs exact in T and the CPU backend's out, dq, dkv in fp32.
struct Reference {
  std::vector<float> q, kv, dout, out, dq, dkv;
};

template <class T> Reference reference(const Dims& x, unsigned seed) {
  std::mt19937 rng(seed);
  Reference r;
  r.q = gputest::random_values<T>(rng, x.q());
  r.kv = gputest::random_values<T>(rng, x.kv());
  r.dout = gputest::random_values<T>(rng, x.q());
  gputest::CpuReference cpu;
  Tensor q = cpu.upload(r.q, x.q_shape()), kv = cpu.upload(r.kv, x.kv_shape()), dout = cpu.upload(r.dout, x.q_shape());
  Tensor out = cpu.ops.empty(x.q_shape()), dq = cpu.ops.empty(x.q_shape()), dkv = cpu.ops.empty(x.kv_shape());
  const Tensor saved = cpu.ops.attention_forward(q, kv, out);
  cpu.ops.attention_backward(dout, q, kv, out, saved, dq, dkv);
  r.out = cpu.download(out), r.dq = cpu.download(dq), r.dkv = cpu.download(dkv);
  return r;
}

template <class T>
void expect_grads(const std::vector<float>& dq, const std::vector<float>& dkv, const Reference& r, const Dims& x) {
  gputest::expect_close<T>(dq, r.dq, gputest::attention_grad<T>(double(x.s), double(x.head_dim)), "dq");
  gputest::expect_close<T>(dkv, r.dkv, gputest::attention_kv_grad<T>(double(x.s), double(x.head_dim), double(x.a / x.g)),
                           "dkv");
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
// stats[ib, i, t] = log Σ_{u ≤ t} exp(q_t·k_u / sqrt(d)), query head i against kv head i/r, in double.
std::vector<float> stats_reference(const Reference& r, const Dims& x) {
  std::vector<float> stats(x.stats());
  std::vector<double> z(x.s);
  const double scale = 1.0 / std::sqrt(static_cast<double>(x.head_dim));
  for (std::int64_t ib = 0; ib < x.b; ++ib)
    for (std::int64_t i = 0; i < x.a; ++i) {
      const auto q_at = [&](std::int64_t t) { return &r.q[((ib * x.s + t) * x.a + i) * x.head_dim]; };
      const auto k_at = [&](std::int64_t u) { return &r.kv[((ib * x.s + u) * x.g + i / (x.a / x.g)) * 2 * x.head_dim]; };
      for (std::int64_t t = 0; t < x.s; ++t) {
        double mx = -INFINITY, sum = 0;
        for (std::int64_t u = 0; u <= t; ++u) {
          double dot = 0;
          for (std::int64_t e = 0; e < x.head_dim; ++e) dot += static_cast<double>(q_at(t)[e]) * k_at(u)[e];
          z[u] = dot * scale;
          mx = std::max(mx, z[u]);
        }
        for (std::int64_t u = 0; u <= t; ++u) sum += std::exp(z[u] - mx);
        stats[(ib * x.a + i) * x.s + t] = static_cast<float>(mx + std::log(sum));
      }
    }
  return stats;
}

void expect_no_cuda_error() { ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a kernel failed while running"; }

// One forward and backward through cuda::CudnnAttention on device buffers.
struct CudnnRun {
  std::vector<float> out, stats, dq, dkv;
};

template <class T>
CudnnRun run_cudnn(cuda::CudnnAttention& sdpa, const Dims& x, const Reference& r, bool deterministic) {
  const cuda::SdpaKey key{x.b, x.s, x.a, x.g, x.head_dim, dtype_of<T>(), deterministic};
  DeviceBuffer<T> q(gputest::to_type<T>(r.q)), kv(gputest::to_type<T>(r.kv)), dout(gputest::to_type<T>(r.dout));
  DeviceBuffer<T> out(x.q()), dq(x.q()), dkv(x.kv());
  DeviceBuffer<float> stats(x.stats());
  DeviceBuffer<std::uint8_t> fwd_ws(sdpa.forward_workspace_bytes(key)), bwd_ws(sdpa.backward_workspace_bytes(key));
  sdpa.forward(key, q.get(), kv.get(), out.get(), stats.get(), fwd_ws.get());
  sdpa.backward(key, q.get(), kv.get(), out.get(), dout.get(), stats.get(), dq.get(), dkv.get(), bwd_ws.get());
  expect_no_cuda_error();
  return {gputest::got(out), stats.download(), gputest::got(dq), gputest::got(dkv)};
}

TYPED_TEST(CudnnAttentionTest, ForwardAndBackwardMatchTheCpuReference) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  for (const Dims& x : kShapes) {
    SCOPED_TRACE(name("cuDNN", x));
    const Reference r = reference<T>(x, static_cast<unsigned>(7 + x.s * 131 + x.head_dim + x.g));
    const CudnnRun g = run_cudnn<T>(sdpa, x, r, false);
    gputest::expect_close<T>(g.out, r.out, gputest::attention_out<T>(double(x.s)), "out");
    gputest::expect_close<float>(g.stats, stats_reference(r, x), gputest::attention_stats(double(x.s), double(x.head_dim)),
                                 "stats");
    expect_grads<T>(g.dq, g.dkv, r, x);
  }
}

// Deterministic mode: the same inputs give the same dq and dkv bit for bit.
TYPED_TEST(CudnnAttentionTest, DeterministicBackwardIsBitwiseRepeatable) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  for (const Dims& x : {Dims{2, 257, 4, 4, 64}, Dims{2, 257, 4, 2, 64}}) {  // several key tiles per query block
    SCOPED_TRACE(name("deterministic", x));
    const Reference r = reference<T>(x, 91);
    const CudnnRun first = run_cudnn<T>(sdpa, x, r, true), second = run_cudnn<T>(sdpa, x, r, true);
    ASSERT_EQ(first.dq.size(), second.dq.size());
    EXPECT_EQ(std::memcmp(first.dq.data(), second.dq.data(), first.dq.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(first.dkv.data(), second.dkv.data(), first.dkv.size() * sizeof(float)), 0);
    expect_grads<T>(first.dq, first.dkv, r, x);
  }
}

// A repeated key reuses its graphs; a new shape, kv head count or the deterministic flag builds new ones.
TYPED_TEST(CudnnAttentionTest, GraphsAreBuiltOncePerKey) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  cuda::CudnnAttention sdpa(nullptr);
  const Dims x{1, 100, 2, 2, 64};
  const Reference r = reference<T>(x, 5);
  run_cudnn<T>(sdpa, x, r, false);
  EXPECT_EQ(sdpa.graphs_built(), 2);  // forward and backward
  run_cudnn<T>(sdpa, x, r, false);
  EXPECT_EQ(sdpa.graphs_built(), 2);
  sdpa.backward_workspace_bytes(cuda::SdpaKey{x.b, x.s, x.a, x.g, x.head_dim, dtype_of<T>(), true});
  EXPECT_EQ(sdpa.graphs_built(), 3);
  sdpa.forward_workspace_bytes(cuda::SdpaKey{x.b, 129, x.a, x.g, x.head_dim, dtype_of<T>(), false});
  EXPECT_EQ(sdpa.graphs_built(), 4);
  sdpa.forward_workspace_bytes(cuda::SdpaKey{x.b, x.s, x.a, 1, x.head_dim, dtype_of<T>(), false});
  EXPECT_EQ(sdpa.graphs_built(), 5);
}
#endif

// --- through CudaOps: the unfused (paper's) path, and cuDNN against it ----------------

struct OpsRun {
  std::vector<float> out, dq, dkv;
};

// out, dq and dkv of the backend's attention forward then backward.
OpsRun run_ops(gputest::Gpu& g, const Reference& r, const Dims& x) {
  Tensor q = g.upload(r.q, x.q_shape()), kv = g.upload(r.kv, x.kv_shape()), dout = g.upload(r.dout, x.q_shape());
  Tensor out = g.ops.empty(x.q_shape()), dq = g.ops.empty(x.q_shape()), dkv = g.ops.empty(x.kv_shape());
  Tensor saved = g.ops.attention_forward(q, kv, out);
  g.ops.attention_backward(dout, q, kv, out, saved, dq, dkv);
  return {g.download(out), g.download(dq), g.download(dkv)};
}

TYPED_TEST(CudnnAttentionTest, UnfusedPathMatchesTheCpuReference) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  for (const Dims& x : kShapes)
    for (const bool fused_ops : {true, false}) {
      SCOPED_TRACE(name(fused_ops ? "unfused attention, fused softmax" : "unfused attention, unfused softmax", x));
      gputest::Gpu g(dtype_of<T>(), fused_ops, Attention::unfused);
      const Reference r = reference<T>(x, static_cast<unsigned>(3 + x.s + x.head_dim + x.g));
      const OpsRun o = run_ops(g, r, x);
      gputest::expect_close<T>(o.out, r.out, gputest::attention_out<T>(double(x.s)), "out");
      expect_grads<T>(o.dq, o.dkv, r, x);
    }
}

// cuDNN and the unfused path agree within the sum of their tolerances to the reference.
TYPED_TEST(CudnnAttentionTest, CudnnAndUnfusedAgree) {
  PTDP_REQUIRE_CUDNN();
  using T = TypeParam;
  for (const Dims& x : {Dims{2, 129, 3, 3, 80}, Dims{1, 257, 8, 2, 128}}) {
    SCOPED_TRACE(name("cuDNN vs unfused", x));
    const Reference r = reference<T>(x, 17);
    gputest::Gpu fast(dtype_of<T>(), true, Attention::flash), paper(dtype_of<T>(), true, Attention::unfused);
    const OpsRun f = run_ops(fast, r, x), p = run_ops(paper, r, x);
    const auto twice = [](gputest::Tolerance t) { return gputest::Tolerance{2 * t.atol, 2 * t.rtol}; };
    const double s = double(x.s), head_dim = double(x.head_dim), group = double(x.a / x.g);
    gputest::expect_close<T>(f.out, p.out, twice(gputest::attention_out<T>(s)), "out");
    gputest::expect_close<T>(f.dq, p.dq, twice(gputest::attention_grad<T>(s, head_dim)), "dq");
    gputest::expect_close<T>(f.dkv, p.dkv, twice(gputest::attention_kv_grad<T>(s, head_dim, group)), "dkv");
  }
}

}  // namespace
}  // namespace ptdp
