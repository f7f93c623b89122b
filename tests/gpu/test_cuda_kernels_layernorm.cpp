// GPU tests of the layernorm CUDA kernels (layernorm.cu), bf16 and fp16,
// against the fp32 CPU reference (core/kernels/cpu/layernorm.h) on the same inputs.
// Letters: n rows (tokens), h hidden. Cases cover the scalar path (h not a
// multiple of 8; an (n, h) view offset by one element), the 128-bit path
// (h a multiple of 8), and more rows than one grid (grid-stride rounds, and
// row slices of the dgamma/dbeta reduction that stride); dgamma and dbeta
// must be bitwise the same on a second run.
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
#include "tests/gpu/gpu_views.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;
using gputest::OffsetBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

template <class T> class CudaLayernorm : public ::testing::Test {};
TYPED_TEST_SUITE(CudaLayernorm, Types16, TypeNames);

// offset: elements between an aligned allocation and row 0 of x, y, dy, dx.
struct Case {
  std::int64_t n, h;
  std::size_t offset;
};
constexpr Case kCases[] = {
    {37, 100, 0},    // scalar: h not a multiple of 8
    {600, 1030, 0},  // scalar, h > one block of threads
    {64, 1024, 0},   // 128-bit accesses
    {48, 520, 1},    // h a multiple of 8 but the view unaligned: scalar
    {8200, 64, 0},   // rows beyond the 8192-block grid: a second grid-stride round
};
constexpr float kEps = 1e-5f;

std::string name(const char* what, Case c) {
  return std::string(what) + " (n " + std::to_string(c.n) + ", h " + std::to_string(c.h) + ", offset " +
         std::to_string(c.offset) + ")";
}

// Inputs of one case: x with a non-zero mean, gamma near 1, beta, dy.
template <class T> struct Inputs {
  std::vector<float> x, gamma, beta, dy;
  Inputs(std::mt19937& rng, Case c)
      : x(gputest::random_values<T>(rng, c.n * c.h, 2.0f)),
        gamma(gputest::random_values<T>(rng, c.h, 0.5f)),
        beta(gputest::random_values<T>(rng, c.h)),
        dy(gputest::random_values<T>(rng, c.n * c.h)) {
    for (auto& v : x) v = gputest::round_to<T>(v + 0.75f);
    for (auto& g : gamma) g = gputest::round_to<T>(g + 1.0f);
  }
};

TYPED_TEST(CudaLayernorm, ForwardMatchesCpu) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(201);
  for (const Case c : kCases) {
    const Inputs<T> in(rng, c);
    OffsetBuffer<T> d_x(gputest::to_type<T>(in.x), c.offset), d_y(c.n * c.h, c.offset);
    DeviceBuffer<T> d_gamma(gputest::to_type<T>(in.gamma)), d_beta(gputest::to_type<T>(in.beta));
    DeviceBuffer<float> d_mean(c.n), d_rstd(c.n);
    cuda::layernorm_forward(d_x.get(), d_gamma.get(), d_beta.get(), c.n, c.h, kEps, d_y.get(), d_mean.get(),
                            d_rstd.get(), nullptr);
    std::vector<float> y(c.n * c.h), mean(c.n), rstd(c.n);
    cpu::layernorm_forward(in.x.data(), in.gamma.data(), in.beta.data(), c.n, c.h, kEps, y.data(), mean.data(),
                           rstd.data());
    gputest::expect_close<T>(got(d_y), y, gputest::reduction<T>(static_cast<double>(c.h)), name("y", c));
    const auto stats_tol = gputest::fp32_reduction(static_cast<double>(c.h));
    gputest::expect_close<float>(got(d_mean), mean, stats_tol, name("mean", c));
    gputest::expect_close<float>(got(d_rstd), rstd, stats_tol, name("rstd", c));
  }
}

// mean and rstd come from the CPU forward (the same fp32 values on both
// sides); dgamma and dbeta start non-zero to check they are accumulated (+=).
// A second run from the same start gives the same bits (fixed-order sums), and
// so does a third that writes dx over dy (the sums read dy first).
TYPED_TEST(CudaLayernorm, BackwardMatchesCpuAccumulatesAndRepeats) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(202);
  for (const Case c : kCases) {
    const Inputs<T> in(rng, c);
    std::vector<float> y(c.n * c.h), mean(c.n), rstd(c.n);
    cpu::layernorm_forward(in.x.data(), in.gamma.data(), in.beta.data(), c.n, c.h, kEps, y.data(), mean.data(),
                           rstd.data());
    const auto dgamma0 = gputest::random_values<float>(rng, c.h), dbeta0 = gputest::random_values<float>(rng, c.h);

    OffsetBuffer<T> d_dy(gputest::to_type<T>(in.dy), c.offset), d_x(gputest::to_type<T>(in.x), c.offset);
    OffsetBuffer<T> d_dx(c.n * c.h, c.offset);
    DeviceBuffer<T> d_gamma(gputest::to_type<T>(in.gamma));
    DeviceBuffer<float> d_mean(mean), d_rstd(rstd);
    std::vector<float> dgamma_runs[3], dbeta_runs[3];
    OffsetBuffer<T> d_dy_dx(gputest::to_type<T>(in.dy), c.offset);  // run 2: dx written over dy
    for (int run = 0; run < 3; ++run) {
      DeviceBuffer<float> d_dgamma(dgamma0), d_dbeta(dbeta0);
      const T* dy = run < 2 ? d_dy.get() : d_dy_dx.get();
      T* dx = run < 2 ? d_dx.get() : d_dy_dx.get();
      cuda::layernorm_backward(dy, d_x.get(), d_gamma.get(), d_mean.get(), d_rstd.get(), c.n, c.h, dx,
                               d_dgamma.get(), d_dbeta.get(), nullptr);
      dgamma_runs[run] = d_dgamma.download();
      dbeta_runs[run] = d_dbeta.download();
    }

    std::vector<float> dx(c.n * c.h), dgamma = dgamma0, dbeta = dbeta0;
    cpu::layernorm_backward(in.dy.data(), in.x.data(), in.gamma.data(), mean.data(), rstd.data(), c.n, c.h,
                            dx.data(), dgamma.data(), dbeta.data());
    gputest::expect_close<T>(got(d_dx), dx, gputest::reduction<T>(static_cast<double>(c.h)), name("dx", c));
    const auto param_tol = gputest::fp32_reduction(static_cast<double>(c.n));  // sums over n rows
    gputest::expect_close<float>(dgamma_runs[0], dgamma, param_tol, name("dgamma", c));
    gputest::expect_close<float>(dbeta_runs[0], dbeta, param_tol, name("dbeta", c));
    gputest::expect_bitwise_equal(dgamma_runs[0], dgamma_runs[1], name("dgamma run to run", c));
    gputest::expect_bitwise_equal(dbeta_runs[0], dbeta_runs[1], name("dbeta run to run", c));
    gputest::expect_close<T>(got(d_dy_dx), dx, gputest::reduction<T>(static_cast<double>(c.h)), name("dx over dy", c));
    gputest::expect_bitwise_equal(dgamma_runs[0], dgamma_runs[2], name("dgamma with dx over dy", c));
    gputest::expect_bitwise_equal(dbeta_runs[0], dbeta_runs[2], name("dbeta with dx over dy", c));
  }
}

}  // namespace
}  // namespace ptdp
