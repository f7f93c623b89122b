// The CUDA backend's linear layers under the fused-operator switch, against
// the fp32 CPU composition: bias+GeLU in fc1's GEMM (GELU_AUX_BIAS), the GeLU
// gradient and fc1's bias gradient in fc2's data-gradient GEMM (DGELU_BGRAD),
// the weight-gradient bias gradient (BGRADB) accumulating into its old value,
// fused and unfused agreeing, bias+residual at a large and an odd shape, and
// the GEMM autotuner counting its shapes. bf16 and fp16; shapes with n, k, m
// off multiples of 8 (cuBLASLt sees 2-byte alignment, the GeLU epilogue falls
// back) and aligned ones. Skipped without a GPU.
// Letters: n tokens, k in, f MLP inner, m out, h hidden.
#include <cmath>
#include <random>

#include "core/kernels/cpu/bias.h"
#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/linear.h"
#include "tests/gpu/cuda_ops_harness.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::expect_close;
using gputest::Tolerance;

template <class T> DType dtype_of() { return std::is_same_v<T, __nv_bfloat16> ? DType::bf16 : DType::f16; }
template <class T> double u16() { return gputest::unit_roundoff<T>(); }

struct Gpu : gputest::CudaOpsHarness {
  Gpu(DType t, bool fused, bool deterministic = false)
      : CudaOpsHarness({t, fused, Attention::flash, 60, deterministic}) {}
};

struct Shape3 {
  std::int64_t n, k, m;
};
// Odd: no dimension a multiple of 8 (2-byte rows, the GeLU aux ld refused).
// Aligned: every row 16-byte aligned, the fused epilogues apply.
const Shape3 kShapes[] = {{37, 100, 70}, {64, 128, 256}};

std::string label(const Shape3& s, bool fused) {
  return std::to_string(s.n) + "x" + std::to_string(s.k) + "x" + std::to_string(s.m) + (fused ? " fused" : " unfused");
}

// Σ over rows of |x| (n, m): the scale of a column sum's rounding error.
std::vector<float> column_abs_sums(const std::vector<float>& x, std::int64_t n, std::int64_t m) {
  std::vector<float> s(static_cast<std::size_t>(m), 0.0f);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < m; ++j) s[static_cast<std::size_t>(j)] += std::abs(x[static_cast<std::size_t>(i * m + j)]);
  return s;
}

// |got − ref| ≤ rel · Σ|terms| + fp32 slack per column sum: when each term
// (and the sum) carries a relative error ≤ rel, the sum's error is at most rel
// times the sum of |terms|.
void expect_sums_close(const std::vector<float>& got, const std::vector<float>& ref, const std::vector<float>& abs_sums,
                       double rel, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (std::size_t j = 0; j < got.size(); ++j) {
    const double bound = rel * abs_sums[j] + 1e-5 * (1 + std::abs(ref[j]));
    ASSERT_LE(std::abs(got[j] - ref[j]), bound) << what << ": element " << j << ": got " << got[j] << ", reference " << ref[j];
  }
}

// Random inputs of a linear layer of shape s, exact in T: x (n, k), w (m, k) ~ N(0, w_sigma²), b (m), dy (n, m).
struct LinearData {
  std::vector<float> x, w, b, dy;
};
template <class T> LinearData linear_data(std::mt19937& rng, const Shape3& s, float w_sigma = 1.0f) {
  LinearData d;
  d.x = gputest::random_values<T>(rng, static_cast<std::size_t>(s.n * s.k));
  d.w = gputest::random_values<T>(rng, static_cast<std::size_t>(s.m * s.k), w_sigma);
  d.b = gputest::random_values<T>(rng, static_cast<std::size_t>(s.m));
  d.dy = gputest::random_values<T>(rng, static_cast<std::size_t>(s.n * s.m));
  return d;
}

Tolerance twice(Tolerance t) { return {2 * t.atol, 2 * t.rtol}; }

template <class T> class CudaLinear : public ::testing::Test {};
TYPED_TEST_SUITE(CudaLinear, gputest::Types16, gputest::TypeNames);

// pre (n, m) = x (n, k)·w (m, k)ᵀ + b, y = gelu(pre). pre is a length-k
// reduction rounded once; y adds |gelu'| ≤ 1.13 times that error plus its own
// rounding: within twice the reduction tolerance.
TYPED_TEST(CudaLinear, LinearGeluForwardMatchesTheCpuFusedAndUnfused) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(11);
  for (const Shape3& s : kShapes) {
    const auto [x, w, b, dy] = linear_data<T>(rng, s, 0.1f);
    std::vector<float> pre(static_cast<std::size_t>(s.n * s.m)), y(pre.size());
    cpu::linear_forward(x.data(), w.data(), b.data(), s.n, s.k, s.m, pre.data());
    cpu::gelu_forward(pre.data(), s.n * s.m, y.data());
    std::vector<float> ys[2];
    for (bool fused : {true, false}) {
      Gpu g(dtype_of<T>(), fused);
      Tensor tx = g.upload(x, {s.n, s.k}), tw = g.upload(w, {s.m, s.k});
      Tensor tb = g.upload(b, {s.m}), tpre = g.ops.empty({s.n, s.m}), ty = g.ops.empty({s.n, s.m});
      g.ops.linear_gelu_forward(tx, tw, tb, tpre, ty);
      const Tolerance tol = gputest::reduction<T>(static_cast<double>(s.k));
      expect_close<T>(g.download(tpre), pre, tol, label(s, fused) + ": pre-activation (aux)");
      ys[fused ? 0 : 1] = g.download(ty);
      expect_close<T>(ys[fused ? 0 : 1], y, twice(tol), label(s, fused) + ": gelu");
    }
    // Each is within tol of the CPU, so within 2·tol of each other.
    expect_close<T>(ys[0], ys[1], twice(twice(gputest::reduction<T>(static_cast<double>(s.k)))), label(s, true) + " vs unfused");
  }
}

// Backward of y = gelu(pre)·w2ᵀ + b2 with dy (n, m), w2 (m, f): dpre is a
// length-m reduction times gelu'(pre) (≤ 1.13), rounded once (fused) or twice
// (unfused): within twice the reduction tolerance. dw2 and db2 are fp32 sums
// over n of exact 16-bit products; db1 sums dpre, whose terms each carry dpre's
// relative error, plus (fused) the epilogue's rounding of the sum to 16 bits.
TYPED_TEST(CudaLinear, LinearGeluBackwardMatchesTheCpuFusedAndUnfused) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(12);
  for (const Shape3& s : kShapes) {
    const std::int64_t n = s.n, f = s.k, m = s.m;
    const auto dy = gputest::random_values<T>(rng, n * m), pre = gputest::random_values<T>(rng, n * f);
    const auto w = gputest::random_values<T>(rng, m * f, 0.1f);
    std::vector<float> gelu(pre.size());
    cpu::gelu_forward(pre.data(), n * f, gelu.data());
    for (float& v : gelu) v = gputest::round_to<T>(v);  // the saved activation is 16-bit
    const auto dw0 = gputest::random_values<float>(rng, m * f), db0 = gputest::random_values<float>(rng, m);
    const auto dbp0 = gputest::random_values<float>(rng, f);
    std::vector<float> dgelu(pre.size()), dpre(pre.size()), dw = dw0, db = db0, dbp = dbp0;
    cpu::linear_backward(dy.data(), gelu.data(), w.data(), n, f, m, dgelu.data(), dw.data(), db.data());
    cpu::gelu_backward(dgelu.data(), pre.data(), n * f, dpre.data());
    cpu::bias_backward(dpre.data(), n, f, dbp.data());
    const Tolerance tol = twice(gputest::reduction<T>(static_cast<double>(m)));
    std::vector<float> dpres[2];
    for (bool fused : {true, false}) {
      Gpu g(dtype_of<T>(), fused);
      Tensor tdy = g.upload(dy, {n, m}), tpre = g.upload(pre, {n, f}), tgelu = g.upload(gelu, {n, f});
      Tensor tw = g.upload(w, {m, f}), tdpre = g.ops.empty({n, f});
      Tensor tdw = g.upload(dw0, {m, f}, DType::f32), tdb = g.upload(db0, {m}, DType::f32);
      Tensor tdbp = g.upload(dbp0, {f}, DType::f32);
      g.ops.linear_gelu_backward(tdy, tgelu, tpre, tw, tdpre, tdw, tdb, tdbp);
      dpres[fused ? 0 : 1] = g.download(tdpre);
      expect_close<T>(dpres[fused ? 0 : 1], dpre, tol, label(s, fused) + ": dpre");
      expect_close<float>(g.download(tdw), dw, gputest::fp32_reduction(static_cast<double>(n)), label(s, fused) + ": dw2");
      expect_close<float>(g.download(tdb), db, gputest::fp32_reduction(static_cast<double>(n)), label(s, fused) + ": db2");
      // Inputs are exact in T and the GEMM accumulates in fp32: each dpre term
      // carries at most two roundings (dgelu, then dpre: unfused) and the fused
      // sum one more (to T): 4·u16 of Σ|dpre| bounds both.
      expect_sums_close(g.download(tdbp), dbp, column_abs_sums(dpre, n, f), 4 * u16<T>(), label(s, fused) + ": db1");
    }
    expect_close<T>(dpres[0], dpres[1], twice(tol), label(s, true) + ": dpre vs unfused");
  }
}

// dx, dw and the bias gradient of a linear layer, called twice: dw and dbias
// accumulate (BGRADB overwrites its output, the backend adds it), dx is overwritten.
TYPED_TEST(CudaLinear, LinearBackwardBiasGradientAccumulatesFusedAndUnfused) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(13);
  for (const Shape3& s : kShapes) {
    const auto [x, w, b, dy] = linear_data<T>(rng, s);
    const auto dw0 = gputest::random_values<float>(rng, s.m * s.k), db0 = gputest::random_values<float>(rng, s.m);
    std::vector<float> dx(static_cast<std::size_t>(s.n * s.k)), dw = dw0, db = db0;
    for (int call = 0; call < 2; ++call)
      cpu::linear_backward(dy.data(), x.data(), w.data(), s.n, s.k, s.m, dx.data(), dw.data(), db.data());
    for (bool fused : {true, false}) {
      Gpu g(dtype_of<T>(), fused);
      Tensor tx = g.upload(x, {s.n, s.k}), tw = g.upload(w, {s.m, s.k}), tdy = g.upload(dy, {s.n, s.m});
      Tensor tdx = g.ops.empty({s.n, s.k}), tdw = g.upload(dw0, {s.m, s.k}, DType::f32);
      Tensor tdb = g.upload(db0, {s.m}, DType::f32);
      for (int call = 0; call < 2; ++call) g.ops.linear_backward(tdy, tx, tw, tdx, tdw, tdb);
      const Tolerance acc = gputest::fp32_reduction(2.0 * static_cast<double>(s.n));
      expect_close<T>(g.download(tdx), dx, gputest::reduction<T>(static_cast<double>(s.m)), label(s, fused) + ": dx");
      expect_close<float>(g.download(tdw), dw, acc, label(s, fused) + ": dw after two calls");
      expect_close<float>(g.download(tdb), db, acc, label(s, fused) + ": dbias after two calls");
    }
  }
}

// Forward with a bias: the epilogue (fused) and GEMM + bias_add kernel (unfused,
// one more rounding of the 16-bit product) both match the CPU.
TYPED_TEST(CudaLinear, LinearForwardWithBiasMatchesTheCpuFusedAndUnfused) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(14);
  for (const Shape3& s : kShapes) {
    const auto [x, w, b, dy] = linear_data<T>(rng, s);
    std::vector<float> y(static_cast<std::size_t>(s.n * s.m));
    cpu::linear_forward(x.data(), w.data(), b.data(), s.n, s.k, s.m, y.data());
    for (bool fused : {true, false}) {
      Gpu g(dtype_of<T>(), fused);
      Tensor tx = g.upload(x, {s.n, s.k}), tw = g.upload(w, {s.m, s.k}), tb = g.upload(b, {s.m});
      Tensor ty = g.ops.empty({s.n, s.m});
      g.ops.linear_forward(tx, tw, tb, ty);
      expect_close<T>(g.download(ty), y, twice(gputest::reduction<T>(static_cast<double>(s.k))), label(s, fused) + ": y");
    }
  }
}

// out = y + bias + residual. Fused: fp32 sum rounded once (element-wise
// tolerance). Unfused: bias_add rounds y + bias (|y + bias| < 8 for these
// N(0, 1) inputs) before add rounds again: atol 8·u16 more.
TYPED_TEST(CudaLinear, BiasResidualAddMatchesTheCpuLargeOddAndAliased) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(15);
  // 2100 × 4096 = 8.6M elements: beyond one pass of the vector kernel's grid
  // (4096 blocks × 256 threads × 8); 1001 × 37: odd rows, a scalar tail.
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{2100, 4096}, {1001, 37}};
  for (const auto& [rows, h] : shapes) {
    const auto y = gputest::random_values<T>(rng, static_cast<std::size_t>(rows * h));
    const auto res = gputest::random_values<T>(rng, y.size()), b = gputest::random_values<T>(rng, static_cast<std::size_t>(h));
    std::vector<float> out = y;
    cpu::bias_add(out.data(), b.data(), rows, h);
    cpu::add(out.data(), res.data(), rows * h, out.data());
    for (bool fused : {true, false}) {
      Gpu g(dtype_of<T>(), fused);
      const std::string what = std::to_string(rows) + "x" + std::to_string(h) + (fused ? " fused" : " unfused");
      Tolerance tol = gputest::elementwise<T>();
      if (!fused) tol.atol += 8 * u16<T>();
      Tensor ty = g.upload(y, {rows, h}), tr = g.upload(res, {rows, h}), tb = g.upload(b, {h});
      Tensor tout = g.ops.empty({rows, h});
      g.ops.bias_residual_add(ty, tb, tr, tout);
      expect_close<T>(g.download(tout), out, tol, what);
      g.ops.bias_residual_add(ty, tb, tr, ty);  // out aliases y
      expect_close<T>(g.download(ty), out, tol, what + ", out aliasing y");
      g.ops.bias_residual_add(g.upload(y, {rows, h}), tb, tr, tr);  // out aliases residual
      expect_close<T>(g.download(tr), out, tol, what + ", out aliasing residual");
      // Rows 1.. of the matrix: a start 2·h bytes in, not 16-byte aligned when h is odd (scalar kernel).
      Tensor ty2 = g.upload(y, {rows, h}), tr2 = g.upload(res, {rows, h});
      Tensor sub_y = ty2.rows(1, rows - 1), sub_r = tr2.rows(1, rows - 1);
      g.ops.bias_residual_add(sub_y, tb, sub_r, sub_y);
      const std::vector<float> got = g.download(ty2);
      expect_close<T>(std::vector<float>(got.begin() + h, got.end()), std::vector<float>(out.begin() + h, out.end()), tol,
                      what + ", rows 1.. (offset start)");
    }
  }
}

TEST(CudaGemm, TunesEachNewShapeOnceAndNotWhenDeterministic) {
  PTDP_REQUIRE_GPU();
  for (bool deterministic : {false, true}) {
    Gpu g(DType::bf16, true, deterministic);
    std::mt19937 rng(16);
    const std::int64_t n = 64, k = 128, m = 96;
    Tensor tx = g.upload(gputest::random_values<__nv_bfloat16>(rng, n * k), {n, k}, DType::bf16);
    Tensor tw = g.upload(gputest::random_values<__nv_bfloat16>(rng, m * k), {m, k}, DType::bf16);
    Tensor ty = g.ops.empty({n, m}), no_bias;
    const std::size_t before = g.ops.tuned_gemm_shapes();
    g.ops.linear_forward(tx, tw, no_bias, ty);
    g.ops.linear_forward(tx, tw, no_bias, ty);  // same key: cached
    g.ops.synchronize();
    const std::size_t tuned = g.ops.tuned_gemm_shapes() - before;
    // The heuristic may offer a single candidate (nothing to time), so at most one.
    if (deterministic) EXPECT_EQ(tuned, 0u);
    else EXPECT_LE(tuned, 1u);
  }
}

}  // namespace
}  // namespace ptdp
