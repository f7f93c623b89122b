// GPU tests of the step's deterministic fp64 reductions (grad_norm.cu) and the
// CudaOps calls built on them: the multi-tensor sum of squares against the CPU
// reference (cpu::sum_squares per tensor, summed in double) over ~300 tensors of
// awkward sizes, bit-identical on repeated launches; the loss accumulator; and
// the asynchronous double-buffered token upload (the host array reused at once).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "core/kernels/cpu/elementwise.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/grad_norm.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using cuda::GradNormConfig;
using gputest::DeviceBuffer;

// The tolerance of one block's fp32 sum: kChunk/kThreads terms per thread, then
// the warp and block trees (log2 kThreads levels); the fp64 combination adds
// nothing visible at this scale.
gputest::Tolerance block_tolerance() {
  return gputest::fp32_nonnegative_sum(static_cast<double>(GradNormConfig::kChunk / GradNormConfig::kThreads),
                                       std::log2(static_cast<double>(GradNormConfig::kThreads)));
}

void expect_near_rel(double got, double ref, gputest::Tolerance tol, const char* what) {
  EXPECT_LE(std::abs(got - ref), tol.atol + tol.rtol * std::abs(ref)) << what << ": got " << got << ", reference " << ref;
}

// Sizes: empty, single elements, block and chunk boundaries ± 1, and many small
// tensors like layernorm parameters; ~300 tensors as a 24-layer GPT has.
std::vector<std::int64_t> segment_sizes() {
  std::vector<std::int64_t> sizes{0, 1, 511, 512, 513, GradNormConfig::kChunk - 1, GradNormConfig::kChunk,
                                  GradNormConfig::kChunk + 1, 3 * GradNormConfig::kChunk + 17, 0, 200003};
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> small(1, 5000);
  while (sizes.size() < 300) sizes.push_back(small(rng));
  return sizes;
}

TEST(CudaGradNorm, MultiTensorSumOfSquaresMatchesCpuAndIsDeterministic) {
  PTDP_REQUIRE_GPU();
  std::mt19937 rng(11);
  std::vector<std::unique_ptr<DeviceBuffer<float>>> buffers;
  std::vector<std::pair<const float*, std::int64_t>> segments;
  double ref = 0;
  for (std::int64_t n : segment_sizes()) {
    const auto x = gputest::random_values<float>(rng, static_cast<std::size_t>(n), 0.5f);
    ref += cpu::sum_squares(x.data(), n);
    buffers.push_back(std::make_unique<DeviceBuffer<float>>(x));
    segments.emplace_back(buffers.back()->get(), n);
  }
  cuda::SumSquaresTableOwner owner(segments, nullptr);
  DeviceBuffer<double> out(1);
  double first = 0;
  for (int call = 0; call < 3; ++call) {  // the arrival counter resets itself between launches
    cuda::sum_squares_multi(owner.table(), out.get(), nullptr);
    const double got = out.download()[0];
    expect_near_rel(got, ref, block_tolerance(), "sum of squares over 300 tensors");
    if (call == 0) first = got;
    EXPECT_EQ(got, first) << "launch " << call << " differs from the first: not deterministic";
  }
}

TEST(CudaGradNorm, EmptyListGivesZero) {
  PTDP_REQUIRE_GPU();
  cuda::SumSquaresTableOwner owner({}, nullptr);
  DeviceBuffer<double> out(1);  // poisoned: must be overwritten
  cuda::sum_squares_multi(owner.table(), out.get(), nullptr);
  EXPECT_EQ(out.download()[0], 0.0);
}

TEST(CudaGradNorm, LossAccumulatorAddsInDouble) {
  PTDP_REQUIRE_GPU();
  std::mt19937 rng(12);
  DeviceBuffer<double> acc(std::vector<double>{0.0});
  double ref = 0;
  for (std::int64_t n : {std::int64_t{4096}, std::int64_t{1}, std::int64_t{777}}) {
    const auto x = gputest::random_values<float>(rng, static_cast<std::size_t>(n), 3.0f);
    for (float v : x) ref += v;
    DeviceBuffer<float> d_x(x);
    cuda::accumulate_sum(d_x.get(), n, acc.get(), nullptr);
    acc.download();  // d_x is freed at scope exit: the kernel must be done
  }
  // fp64 sums of < 5000 fp32 values: error ≤ 5000·2^-53·Σ|x| ≈ 1e-12·Σ|x|.
  expect_near_rel(acc.download()[0], ref, {1e-9, 1e-9}, "accumulated loss");
}

TEST(CudaGradNorm, CudaOpsSumSquaresMultiAgreesWithPerTensorCalls) {
  PTDP_REQUIRE_GPU();
  CudaPoolAllocator alloc(0);
  CudaOps ops(alloc, {DType::bf16, true, Attention::flash, 60});
  std::mt19937 rng(13);
  std::vector<Tensor> tensors;
  std::vector<const Tensor*> list;
  double per_tensor = 0;
  for (std::int64_t n : {std::int64_t{100}, std::int64_t{70000}, std::int64_t{0}, std::int64_t{3}}) {
    const auto x = gputest::random_values<float>(rng, static_cast<std::size_t>(n));
    tensors.push_back(ops.empty({n}, DType::f32));
    if (n > 0) ops.upload_f32(x.data(), tensors.back());
  }
  for (const Tensor& t : tensors) {
    list.push_back(&t);
    per_tensor += ops.sum_squares(t);
  }
  const double multi = ops.sum_squares_multi(list);
  expect_near_rel(multi, per_tensor, block_tolerance(), "sum_squares_multi vs sum_squares");
  EXPECT_EQ(ops.sum_squares_multi(list), multi) << "the cached table gives the same bits";
  Tensor acc = ops.zeros({1}, DType::f64);
  ops.accumulate_sum(tensors[0], acc);
  ops.accumulate_sum(tensors[3], acc);
  std::vector<float> a(100), b(3);
  ops.download_f32(tensors[0], a.data());
  ops.download_f32(tensors[3], b.data());
  double ref = 0;
  for (float v : a) ref += v;
  for (float v : b) ref += v;
  expect_near_rel(ops.read_f64(acc), ref, {1e-12, 1e-12}, "accumulate_sum + read_f64");
}

// Five uploads from one host array, rewritten right after each call: every
// device tensor holds the values of its own call (three reuse a staging buffer).
TEST(CudaGradNorm, TokenUploadsMayReuseTheHostArrayAtOnce) {
  PTDP_REQUIRE_GPU();
  CudaPoolAllocator alloc(0);
  CudaOps ops(alloc, {DType::bf16, true, Attention::flash, 60});
  constexpr std::int64_t n = 8192;
  std::vector<std::int32_t> host(n);
  std::vector<Tensor> uploaded;
  for (int k = 0; k < 5; ++k) {
    for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(k * 100000 + i);
    uploaded.push_back(ops.empty({n}, DType::i32));
    ops.upload_i32(host.data(), uploaded.back());
  }
  std::fill(host.begin(), host.end(), -1);
  ops.synchronize();
  for (int k = 0; k < 5; ++k) {
    std::vector<std::int32_t> got(n);
    ASSERT_EQ(cudaMemcpy(got.data(), uploaded[static_cast<std::size_t>(k)].raw(), n * sizeof(std::int32_t),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(i)], k * 100000 + i) << "upload " << k << " element " << i;
  }
}

}  // namespace
}  // namespace ptdp
