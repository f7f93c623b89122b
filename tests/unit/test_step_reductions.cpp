// The CPU defaults of the step's scalar reductions (core/kernels/ops.h): the
// device loss accumulator adds the per-token losses in order in double, bit for
// bit as the host loop it replaced; the multi-tensor sum of squares equals the
// per-tensor calls summed in list order; misuse is refused.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"

namespace ptdp {
namespace {

Tensor random_tensor(CpuOps& ops, std::mt19937& rng, std::int64_t n) {
  std::normal_distribution<float> dist(2.0f, 1.5f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  Tensor t = ops.empty({n}, DType::f32);
  ops.upload_f32(v.data(), t);
  return t;
}

TEST(StepReductions, LossAccumulatorIsBitwiseTheHostLoop) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  std::mt19937 rng(5);
  Tensor acc = ops.zeros({1}, DType::f64);
  double host = 0;
  for (std::int64_t n : {64, 1, 1000, 37}) {
    Tensor losses = random_tensor(ops, rng, n);
    ops.accumulate_sum(losses, acc);
    std::vector<float> copy(static_cast<std::size_t>(n));
    ops.download_f32(losses, copy.data());
    for (float l : copy) host += l;  // the executor's former per-micro-batch loop
  }
  EXPECT_EQ(ops.read_f64(acc), host);
}

TEST(StepReductions, SumSquaresMultiIsThePerTensorSum) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  std::mt19937 rng(6);
  std::vector<Tensor> tensors;
  for (std::int64_t n : {10, 0, 3000, 7}) tensors.push_back(random_tensor(ops, rng, n));
  std::vector<const Tensor*> list;
  double loop = 0;
  for (const Tensor& t : tensors) {
    list.push_back(&t);
    loop += ops.sum_squares(t);
  }
  EXPECT_EQ(ops.sum_squares_multi(list), loop);
  EXPECT_EQ(ops.sum_squares_multi({}), 0.0);
}

TEST(StepReductions, RefusesAccumulatorsThatAreNotOneDouble) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  Tensor x = ops.zeros({4}, DType::f32), wrong = ops.zeros({1}, DType::f32), two = ops.zeros({2}, DType::f64);
  EXPECT_THROW(ops.accumulate_sum(x, wrong), std::logic_error);
  EXPECT_THROW(ops.accumulate_sum(x, two), std::logic_error);
  EXPECT_THROW(ops.read_f64(wrong), std::logic_error);
}

}  // namespace
}  // namespace ptdp
