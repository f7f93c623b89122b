// GPU tests of the Llama block's ops in CudaOps (issue 19), bf16 and fp16,
// each against the same op of the CPU backend (CpuOps, fp32) on inputs exact
// in the 16-bit type: RMSNorm forward and backward (dgamma accumulated and
// bitwise the same on a second run; h not a multiple of 8, h a multiple of 8,
// a view one element in, more rows than one grid), the fused SwiGLU forward and
// backward (f not a multiple of 8 and a multiple of 8), and RoPE forward and
// backward on q and the k half of kv (g < a and g = a; the v half untouched).
// Letters: n rows, h hidden, f the MLP width, b, s, a, g, d as ops.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tests/gpu/cpu_reference.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::expect_close;

template <class T> constexpr DType dtype_of() { return std::is_same_v<T, __nv_bfloat16> ? DType::bf16 : DType::f16; }

template <class T> class CudaLlamaOps : public ::testing::Test {};
TYPED_TEST_SUITE(CudaLlamaOps, gputest::Types16, gputest::TypeNames);

struct NormCase {
  std::int64_t n, h, skip;  // skip: elements before the tested view (1: not 16-byte aligned, the scalar path)
};
constexpr NormCase kNormCases[] = {{37, 100, 0}, {600, 1030, 0}, {64, 1024, 0}, {48, 520, 1}, {8200, 64, 0}};

std::string name(const char* what, const NormCase& c) {
  return std::string(what) + " (n " + std::to_string(c.n) + ", h " + std::to_string(c.h) + ", skip " +
         std::to_string(c.skip) + ")";
}

// An (n, h) view `skip` elements into a fresh device tensor, holding `v`.
Tensor upload_rows(gputest::Gpu& g, const std::vector<float>& v, const NormCase& c) {
  std::vector<float> all(static_cast<std::size_t>(c.skip), 0.0f);
  all.insert(all.end(), v.begin(), v.end());
  return g.upload(all, {c.skip + c.n * c.h}).rows(c.skip, c.n * c.h).view({c.n, c.h});
}

TYPED_TEST(CudaLlamaOps, RmsnormMatchesTheCpuAccumulatesAndRepeats) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(301);
  for (const NormCase& c : kNormCases) {
    auto x = gputest::random_values<T>(rng, c.n * c.h, 2.0f), gamma = gputest::random_values<T>(rng, c.h, 0.5f);
    for (auto& v : x) v = gputest::round_to<T>(v + 0.75f);  // a non-zero mean: RMS is not the standard deviation
    for (auto& v : gamma) v = gputest::round_to<T>(v + 1.0f);
    const auto dy = gputest::random_values<T>(rng, c.n * c.h), dgamma0 = gputest::random_values<float>(rng, c.h);

    gputest::CpuReference cpu;
    Tensor cx = cpu.upload(x, {c.n, c.h}), cg = cpu.upload(gamma, {c.h}), cdy = cpu.upload(dy, {c.n, c.h});
    Tensor cy = cpu.ops.empty({c.n, c.h}), crstd = cpu.ops.empty({c.n}), cdx = cpu.ops.empty({c.n, c.h});
    Tensor cdg = cpu.upload(dgamma0, {c.h});
    cpu.ops.rmsnorm_forward(cx, cg, cy, crstd);
    cpu.ops.rmsnorm_backward(cdy, cx, cg, crstd, cdx, cdg);

    gputest::Gpu g(dtype_of<T>());
    Tensor gx = upload_rows(g, x, c), gdy = upload_rows(g, dy, c), gy = upload_rows(g, x, c);
    Tensor gdx = upload_rows(g, dy, c), gg = g.upload(gamma, {c.h});
    Tensor grstd = g.ops.empty({c.n}, DType::f32);
    g.ops.rmsnorm_forward(gx, gg, gy, grstd);
    const auto rstd = g.download(grstd);
    expect_close<T>(g.download(gy), cpu.download(cy), gputest::reduction<T>(double(c.h)), name("y", c));
    expect_close<float>(rstd, cpu.download(crstd), gputest::fp32_reduction(double(c.h)), name("rstd", c));

    std::vector<float> dgamma_runs[2];
    for (auto& run : dgamma_runs) {  // the CPU's rstd on both sides; dgamma starts non-zero (+=)
      Tensor grstd_ref = g.upload(cpu.download(crstd), {c.n}, DType::f32), gdg = g.upload(dgamma0, {c.h}, DType::f32);
      g.ops.rmsnorm_backward(gdy, gx, gg, grstd_ref, gdx, gdg);
      run = g.download(gdg);
    }
    expect_close<T>(g.download(gdx), cpu.download(cdx), gputest::reduction<T>(double(c.h)), name("dx", c));
    expect_close<float>(dgamma_runs[0], cpu.download(cdg), gputest::fp32_reduction(double(c.n)), name("dgamma", c));
    gputest::expect_bitwise_equal(dgamma_runs[0], dgamma_runs[1], name("dgamma run to run", c));
  }
}

TYPED_TEST(CudaLlamaOps, SwigluMatchesTheCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(302);
  for (const auto& [n, f] : {std::pair<std::int64_t, std::int64_t>{37, 100}, {64, 96}, {5000, 24}, {3, 1}}) {
    const std::string what = " (n " + std::to_string(n) + ", f " + std::to_string(f) + ")";
    const auto pre = gputest::random_values<T>(rng, n * 2 * f, 2.0f), dy = gputest::random_values<T>(rng, n * f);
    gputest::CpuReference cpu;
    Tensor cpre = cpu.upload(pre, {n, 2 * f}), cdy = cpu.upload(dy, {n, f});
    Tensor cy = cpu.ops.empty({n, f}), cdpre = cpu.ops.empty({n, 2 * f});
    cpu.ops.swiglu_forward(cpre, cy);
    cpu.ops.swiglu_backward(cdy, cpre, cdpre);

    gputest::Gpu g(dtype_of<T>());
    Tensor gpre = g.upload(pre, {n, 2 * f}), gdy = g.upload(dy, {n, f});
    Tensor gy = g.ops.empty({n, f}), gdpre = g.ops.empty({n, 2 * f});
    g.ops.swiglu_forward(gpre, gy);
    g.ops.swiglu_backward(gdy, gpre, gdpre);
    expect_close<T>(g.download(gy), cpu.download(cy), gputest::elementwise<T>(), "y" + what);
    expect_close<T>(g.download(gdpre), cpu.download(cdpre), gputest::elementwise<T>(), "dpre" + what);
  }
}

struct RopeCase {
  std::int64_t b, s, a, g, head_dim;
};
constexpr RopeCase kRopeCases[] = {{2, 45, 4, 2, 16}, {1, 300, 2, 2, 64}, {2, 17, 6, 1, 10}};

TYPED_TEST(CudaLlamaOps, RopeForwardAndBackwardMatchTheCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(303);
  for (const RopeCase& x : kRopeCases) {
    const std::string what = " (b " + std::to_string(x.b) + ", s " + std::to_string(x.s) + ", a " +
                             std::to_string(x.a) + ", g " + std::to_string(x.g) + ", d " + std::to_string(x.head_dim) + ")";
    const Shape qs{x.b, x.s, x.a, x.head_dim}, kvs{x.b, x.s, x.g, 2, x.head_dim};
    const auto q = gputest::random_values<T>(rng, x.b * x.s * x.a * x.head_dim);
    const auto kv = gputest::random_values<T>(rng, x.b * x.s * x.g * 2 * x.head_dim);
    const double theta = x.head_dim == 64 ? 500000.0 : 10000.0;  // Llama 3's base and the original one
    for (const bool backward : {false, true}) {
      gputest::CpuReference cpu;
      Tensor cq = cpu.upload(q, qs), ckv = cpu.upload(kv, kvs);
      gputest::Gpu g(dtype_of<T>());
      Tensor gq = g.upload(q, qs), gkv = g.upload(kv, kvs);
      if (backward) {
        cpu.ops.rope_backward(cq, ckv, theta);
        g.ops.rope_backward(gq, gkv, theta);
      } else {
        cpu.ops.rope_forward(cq, ckv, theta);
        g.ops.rope_forward(gq, gkv, theta);
      }
      const std::string dir = backward ? "backward " : "forward ";
      expect_close<T>(g.download(gq), cpu.download(cq), gputest::rope<T>(double(x.s)), dir + "q" + what);
      expect_close<T>(g.download(gkv), cpu.download(ckv), gputest::rope<T>(double(x.s)), dir + "kv" + what);
    }
  }
}

}  // namespace
}  // namespace ptdp
