// The vectorizable fp32 exponential and the CPU GeLU built on it, against
// double precision over dense grids: the GeLU is the reference the GPU
// kernels are tested against, so its speed-up must not cost accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cpu/vector_exp.h"

namespace ptdp {
namespace {

// Every 1/64 over the domain [−87, 88]: relative error at most 4 ulp (5e-7).
TEST(VectorExp, RelativeErrorWithinFourUlpOverItsDomain) {
  double worst = 0;
  for (int i = -87 * 64; i <= 88 * 64; ++i) {
    const float x = static_cast<float>(i) / 64.0f;
    const double ref = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(cpu::vector_exp(x) - ref) / ref);
  }
  EXPECT_LE(worst, 5e-7);
  EXPECT_FLOAT_EQ(cpu::vector_exp(-200.0f), cpu::vector_exp(-87.0f));  // clamped, not 0 or NaN
  EXPECT_FLOAT_EQ(cpu::vector_exp(200.0f), cpu::vector_exp(88.0f));
}

double gelu_ref(double x) {
  const double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(u));
}
double gelu_grad_ref(double x) {
  const double c = std::sqrt(2.0 / std::numbers::pi), th = std::tanh(c * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * c * (1 + 3 * 0.044715 * x * x);
}

// x every 1/256 over [−12, 12] (fp32 inputs, evaluated exactly in double).
// Forward: error ≤ 2e-6 of max(|ref|, 1e-3·|x|), relative where GeLU is not
// vanishing (measured 5.5e-7; the former tanhf form 1.5e-5). Backward: ≤ 1e-4
// of max(|ref|, 1e-3), the floor where gelu' crosses zero near x = −0.75 and
// the two terms cancel (measured 3.4e-5; the tanhf form 5.4e-4).
TEST(VectorExp, GeluForwardAndBackwardMatchDoubleTanhForm) {
  std::vector<float> x;
  for (int i = -12 * 256; i <= 12 * 256; ++i) x.push_back(static_cast<float>(i) / 256.0f);
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<float> y(x.size()), dy(x.size(), 1.0f), dx(x.size());
  cpu::gelu_forward(x.data(), n, y.data());
  cpu::gelu_backward(dy.data(), x.data(), n, dx.data());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double xi = x[i], ref = gelu_ref(xi), gref = gelu_grad_ref(xi);
    ASSERT_LE(std::abs(y[i] - ref), 2e-6 * std::max(std::abs(ref), 1e-3 * std::abs(xi))) << "gelu(" << xi << ")";
    ASSERT_LE(std::abs(dx[i] - gref), 1e-4 * std::max(std::abs(gref), 1e-3)) << "gelu'(" << xi << ")";
  }
}

}  // namespace
}  // namespace ptdp

namespace ptdp::cpu {
namespace {

// gelu.cpp is compiled with -ffinite-math-only (see there), but a NaN input
// still reaches the output through the arithmetic on x itself: a diverging
// run is not hidden by the activation.
TEST(VectorExp, GeluPassesNanThrough) {
  std::vector<float> x(64, 0.5f), y(64), dy(64, 1.0f), dx(64);
  x[7] = std::nanf(""), x[40] = std::nanf("");
  gelu_forward(x.data(), 64, y.data());
  gelu_backward(dy.data(), x.data(), 64, dx.data());
  for (const int i : {7, 40}) {
    EXPECT_TRUE(std::isnan(y[static_cast<std::size_t>(i)])) << i;
    EXPECT_TRUE(std::isnan(dx[static_cast<std::size_t>(i)])) << i;
  }
  EXPECT_FALSE(std::isnan(y[0]));
}

}  // namespace
}  // namespace ptdp::cpu
