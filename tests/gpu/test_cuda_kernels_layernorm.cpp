// GPU tests of the layernorm CUDA kernels (layernorm.cu), bf16 and fp16,
// against the fp32 CPU reference (core/kernels/cpu/layernorm.h) on the same inputs.
// Letters: n rows (tokens), h hidden. Shapes are off every block multiple, and
// the larger one strides rows beyond one tile of the dgamma/dbeta reduction.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/layernorm.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

template <class T> class CudaLayernorm : public ::testing::Test {};
TYPED_TEST_SUITE(CudaLayernorm, Types16, TypeNames);

struct Shape {
  std::int64_t n, h;
};
constexpr Shape kShapes[] = {{37, 100}, {600, 1030}};
constexpr float kEps = 1e-5f;

std::string name(const char* what, Shape sh) {
  return std::string(what) + " (n " + std::to_string(sh.n) + ", h " + std::to_string(sh.h) + ")";
}

// Inputs of one shape: x with a non-zero mean, gamma near 1, beta, dy.
template <class T> struct Inputs {
  std::vector<float> x, gamma, beta, dy;
  Inputs(std::mt19937& rng, Shape sh)
      : x(gputest::random_values<T>(rng, sh.n * sh.h, 2.0f)),
        gamma(gputest::random_values<T>(rng, sh.h, 0.5f)),
        beta(gputest::random_values<T>(rng, sh.h)),
        dy(gputest::random_values<T>(rng, sh.n * sh.h)) {
    for (auto& v : x) v = gputest::round_to<T>(v + 0.75f);
    for (auto& g : gamma) g = gputest::round_to<T>(g + 1.0f);
  }
};

TYPED_TEST(CudaLayernorm, ForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(201);
  for (const Shape sh : kShapes) {
    const Inputs<T> in(rng, sh);
    DeviceBuffer<T> d_x(gputest::to_type<T>(in.x)), d_gamma(gputest::to_type<T>(in.gamma));
    DeviceBuffer<T> d_beta(gputest::to_type<T>(in.beta)), d_y(sh.n * sh.h);
    DeviceBuffer<float> d_mean(sh.n), d_rstd(sh.n);
    cuda::layernorm_forward(d_x.get(), d_gamma.get(), d_beta.get(), sh.n, sh.h, kEps, d_y.get(), d_mean.get(),
                            d_rstd.get(), nullptr);
    std::vector<float> y(sh.n * sh.h), mean(sh.n), rstd(sh.n);
    cpu::layernorm_forward(in.x.data(), in.gamma.data(), in.beta.data(), sh.n, sh.h, kEps, y.data(), mean.data(),
                           rstd.data());
    gputest::expect_close<T>(got(d_y), y, gputest::reduction<T>(static_cast<double>(sh.h)), name("y", sh));
    const auto stats_tol = gputest::fp32_reduction(static_cast<double>(sh.h));
    gputest::expect_close<float>(got(d_mean), mean, stats_tol, name("mean", sh));
    gputest::expect_close<float>(got(d_rstd), rstd, stats_tol, name("rstd", sh));
  }
}

// mean and rstd come from the CPU forward (the same fp32 values on both
// sides); dgamma and dbeta start non-zero to check they are accumulated (+=).
TYPED_TEST(CudaLayernorm, BackwardMatchesCpuAndAccumulates) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(202);
  for (const Shape sh : kShapes) {
    const Inputs<T> in(rng, sh);
    std::vector<float> y(sh.n * sh.h), mean(sh.n), rstd(sh.n);
    cpu::layernorm_forward(in.x.data(), in.gamma.data(), in.beta.data(), sh.n, sh.h, kEps, y.data(), mean.data(),
                           rstd.data());
    const auto dgamma0 = gputest::random_values<float>(rng, sh.h), dbeta0 = gputest::random_values<float>(rng, sh.h);

    DeviceBuffer<T> d_dy(gputest::to_type<T>(in.dy)), d_x(gputest::to_type<T>(in.x));
    DeviceBuffer<T> d_gamma(gputest::to_type<T>(in.gamma)), d_dx(sh.n * sh.h);
    DeviceBuffer<float> d_mean(mean), d_rstd(rstd), d_dgamma(dgamma0), d_dbeta(dbeta0);
    cuda::layernorm_backward(d_dy.get(), d_x.get(), d_gamma.get(), d_mean.get(), d_rstd.get(), sh.n, sh.h, d_dx.get(),
                             d_dgamma.get(), d_dbeta.get(), nullptr);

    std::vector<float> dx(sh.n * sh.h), dgamma = dgamma0, dbeta = dbeta0;
    cpu::layernorm_backward(in.dy.data(), in.x.data(), in.gamma.data(), mean.data(), rstd.data(), sh.n, sh.h,
                            dx.data(), dgamma.data(), dbeta.data());
    gputest::expect_close<T>(got(d_dx), dx, gputest::reduction<T>(static_cast<double>(sh.h)), name("dx", sh));
    const auto param_tol = gputest::fp32_reduction(static_cast<double>(sh.n));  // sums over n rows
    gputest::expect_close<float>(got(d_dgamma), dgamma, param_tol, name("dgamma", sh));
    gputest::expect_close<float>(got(d_dbeta), dbeta, param_tol, name("dbeta", sh));
  }
}

}  // namespace
}  // namespace ptdp
