// CPU reference kernels of the Llama block (RMSNorm, SwiGLU, RoPE): forward
// against float64 formulas written here with naive loops, backward (float and
// double instantiations) against float64 central finite differences of
// L = Σ dy ∘ forward(x). Letters: n rows, h hidden, f inner width, b batch,
// s sequence, a query heads, g kv heads, d head dim.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/kernels/cpu/rmsnorm.h"
#include "core/kernels/cpu/rope.h"
#include "core/kernels/cpu/swiglu.h"
#include "cpu_kernels_test_util.h"

namespace ptdp::test {
namespace {

using std::int64_t;
constexpr double kEps = 1e-5;

TEST(CpuRmsNorm, ForwardMatchesFormulaAndBackwardFiniteDifferences) {
  const int64_t n = 5, h = 8;
  std::mt19937 rng(41);
  auto x = randn(rng, n * h), gamma = randn(rng, h, 0.5, 1.0);
  const auto dy = randn(rng, n * h), prior = randn(rng, h);
  std::vector<double> ref(n * h);
  for (int64_t i = 0; i < n; ++i) {
    double ms = 0;
    for (int64_t j = 0; j < h; ++j) ms += x[i * h + j] * x[i * h + j] / h;
    for (int64_t j = 0; j < h; ++j) ref[i * h + j] = x[i * h + j] / std::sqrt(ms + kEps) * gamma[j];
  }
  std::vector<float> y(n * h), rstd(n);
  cpu::rmsnorm_forward(cast<float>(x).data(), cast<float>(gamma).data(), n, h, static_cast<float>(kEps), y.data(),
                       rstd.data());
  expect_close(y, ref, kFwdF32, "rmsnorm_forward y");
  const auto loss = [&] {
    std::vector<double> out(n * h), r(n);
    cpu::rmsnorm_forward(x.data(), gamma.data(), n, h, kEps, out.data(), r.data());
    return dot(out, dy);
  };
  const auto fd_x = fd_grad(x, loss), fd_g = fd_grad(gamma, loss);
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    const auto xt = cast<T>(x), gt = cast<T>(gamma);
    std::vector<T> out(n * h), r(n), dx(n * h, T(-7));
    auto dgamma = cast<T>(prior);
    cpu::rmsnorm_forward(xt.data(), gt.data(), n, h, static_cast<T>(kEps), out.data(), r.data());
    cpu::rmsnorm_backward(cast<T>(dy).data(), xt.data(), gt.data(), r.data(), n, h, dx.data(), dgamma.data());
    expect_close(dx, fd_x, tol, "rmsnorm_backward dx" + name);
    expect_close(dgamma, plus(prior, fd_g), tol, "rmsnorm_backward dgamma" + name);
  });
}

TEST(CpuSwiGlu, ForwardMatchesFormulaAndBackwardFiniteDifferences) {
  const int64_t n = 4, f = 6;
  std::mt19937 rng(42);
  auto pre = randn(rng, n * 2 * f, 2.0);
  const auto dy = randn(rng, n * f);
  std::vector<double> ref(n * f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < f; ++j) {
      const double gate = pre[i * 2 * f + j], up = pre[i * 2 * f + f + j];
      ref[i * f + j] = gate / (1 + std::exp(-gate)) * up;
    }
  std::vector<float> y(n * f);
  cpu::swiglu_forward(cast<float>(pre).data(), n, f, y.data());
  expect_close(y, ref, kFwdF32, "swiglu_forward y");
  const auto fd = fd_grad(pre, [&] {
    std::vector<double> out(n * f);
    cpu::swiglu_forward(pre.data(), n, f, out.data());
    return dot(out, dy);
  });
  for_float_and_double([&](auto type, Tol tol, const std::string& name) {
    using T = typename decltype(type)::type;
    std::vector<T> dpre(pre.size(), T(-7));
    cpu::swiglu_backward(cast<T>(dy).data(), cast<T>(pre).data(), n, f, dpre.data());
    expect_close(dpre, fd, tol, "swiglu_backward dpre" + name);
  });
}

// x (b, s, c, stride) with each head's first d values rotated, as rope.h says:
// position p, pair (j, j + d/2) by the angle p·theta^(-2j/d).
std::vector<double> rope_ref(const std::vector<double>& x, int64_t b, int64_t s, int64_t c, int64_t stride,
                             int64_t head_dim, double theta) {
  std::vector<double> y = x;
  for (int64_t ib = 0; ib < b; ++ib)
    for (int64_t p = 0; p < s; ++p)
      for (int64_t ih = 0; ih < c; ++ih)
        for (int64_t j = 0; j < head_dim / 2; ++j) {
          const int64_t at = ((ib * s + p) * c + ih) * stride + j;
          const double exponent = -2.0 * static_cast<double>(j) / static_cast<double>(head_dim);
          const double angle = static_cast<double>(p) * std::pow(theta, exponent);
          y[at] = x[at] * std::cos(angle) - x[at + head_dim / 2] * std::sin(angle);
          y[at + head_dim / 2] = x[at + head_dim / 2] * std::cos(angle) + x[at] * std::sin(angle);
        }
  return y;
}

// q (b, s, a, d): stride d; kv (b, s, g, 2, d): the k half of stride 2d, v untouched.
TEST(CpuRope, ForwardMatchesFormulaAndBackwardIsItsTranspose) {
  const int64_t b = 2, s = 5, a = 4, g = 2, head_dim = 6;
  const double theta = 100.0;  // small, so the angles of every pair differ visibly over 5 positions
  std::mt19937 rng(43);
  auto q = randn(rng, b * s * a * head_dim), kv = randn(rng, b * s * g * 2 * head_dim);
  for (const auto& [x, c, stride] : {std::tuple{&q, a, head_dim}, std::tuple{&kv, g, 2 * head_dim}}) {
    auto got = cast<float>(*x);
    cpu::rope_rotate(got.data(), b, s, c, stride, head_dim, theta, 1);
    expect_close(got, rope_ref(*x, b, s, c, stride, head_dim, theta), kFwdF32,
                 "rope_rotate forward, stride " + std::to_string(stride));
    const auto dy = randn(rng, x->size());
    const auto fd = fd_grad(*x, [&] {
      auto y = *x;
      cpu::rope_rotate(y.data(), b, s, c, stride, head_dim, theta, 1);
      return dot(y, dy);
    });
    for_float_and_double([&](auto type, Tol tol, const std::string& name) {
      using T = typename decltype(type)::type;
      auto dx = cast<T>(dy);
      cpu::rope_rotate(dx.data(), b, s, c, stride, head_dim, theta, -1);
      expect_close(dx, fd, tol, "rope_rotate backward, stride " + std::to_string(stride) + name);
    });
  }
}

}  // namespace
}  // namespace ptdp::test
