// GPU tests of the multi-tensor AdamW (adamw.cu) and its table builder
// (adamw_table.h): three tensors of odd sizes (one spanning two chunks), two
// steps, each tensor against cpu::adamw_step with its own weight decay; the
// rounded weights in bf16 and fp16 (and one tensor without weights).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/kernels/cpu/adamw.h"
#include "core/kernels/cuda/adamw_table.h"
#include "core/kernels/cuda/kernels.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

using gputest::DeviceBuffer;

using gputest::TypeNames;
using gputest::Types16;

using gputest::got;

constexpr std::int64_t kSizes[] = {1001, cuda::AdamWTable::kChunk + 3, 7};  // chunks: 1 + 2 + 1
constexpr float kDecay[] = {0.1f, 0.0f, 0.05f};
constexpr bool kHasWeight[] = {true, true, false};
constexpr int kTensors = 3;

// One tensor's state on the host (the CPU reference's) and on the device.
template <class T> struct TensorState {
  std::vector<float> master, m, v;
  DeviceBuffer<float> d_master, d_grad, d_m, d_v;
  DeviceBuffer<T> d_weight;
  TensorState(std::mt19937& rng, std::int64_t n)
      : master(gputest::random_values<float>(rng, n)),
        m(n, 0.0f),
        v(n, 0.0f),
        d_master(master),
        d_grad(n),
        d_m(m),
        d_v(v),
        d_weight(n) {}
};

template <class T> class CudaAdamW : public ::testing::Test {};
TYPED_TEST_SUITE(CudaAdamW, Types16, TypeNames);

// fp32 element-wise update on identical fp32 inputs: only operation order and
// FMA contraction differ (a few fp32 ulps), so fp32_reduction(1) (2e-5) bounds
// master, m and v; weights are master rounded once to T (element-wise).
TYPED_TEST(CudaAdamW, MultiTensorMatchesCpuOverTwoSteps) {
  PTDP_REQUIRE_GPU();
  using T = TypeParam;
  std::mt19937 rng(601);
  std::vector<std::unique_ptr<TensorState<T>>> st;  // device buffers do not move
  std::vector<cuda::AdamWTensor> tensors;
  for (int i = 0; i < kTensors; ++i) {
    const auto& s = *st.emplace_back(std::make_unique<TensorState<T>>(rng, kSizes[i]));
    tensors.push_back({s.d_master.get(), s.d_grad.get(), s.d_m.get(), s.d_v.get(),
                       kHasWeight[i] ? static_cast<void*>(s.d_weight.get()) : nullptr, kSizes[i], kDecay[i]});
  }
  const cuda::AdamWTableOwner owner(tensors, nullptr);
  ASSERT_EQ(owner.table().tensors, kTensors);
  ASSERT_EQ(owner.table().chunks, 4);

  cpu::AdamWParams hp;
  hp.lr = 1e-2f;
  for (int step = 1; step <= 2; ++step) {
    std::vector<std::vector<float>> grads;
    for (int i = 0; i < kTensors; ++i) {
      grads.push_back(gputest::random_values<float>(rng, kSizes[i]));
      st[i]->d_grad.upload(grads.back());
    }
    cuda::adamw_multi_tensor<T>(owner.table(), hp.lr, hp.beta1, hp.beta2, hp.eps, step, nullptr);
    for (int i = 0; i < kTensors; ++i) {
      TensorState<T>& s = *st[i];
      hp.step = step;
      hp.weight_decay = kDecay[i];
      cpu::adamw_step(s.master.data(), grads[i].data(), s.m.data(), s.v.data(), kSizes[i], hp);
      const std::string what = "tensor " + std::to_string(i) + " step " + std::to_string(step);
      gputest::expect_close<float>(got(s.d_master), s.master, gputest::fp32_reduction(1), what + " master");
      gputest::expect_close<float>(got(s.d_m), s.m, gputest::fp32_reduction(1), what + " m");
      gputest::expect_close<float>(got(s.d_v), s.v, gputest::fp32_reduction(1), what + " v");
      if (kHasWeight[i])
        gputest::expect_close<T>(got(s.d_weight), s.master, gputest::elementwise<T>(), what + " weight");
    }
  }
}

// Tensors without elements add no chunks; an empty table launches nothing.
TEST(CudaAdamWTable, EmptyTensorsAddNoChunks) {
  PTDP_REQUIRE_GPU();
  const cuda::AdamWTableOwner empty({}, nullptr);
  EXPECT_EQ(empty.table().chunks, 0);
  cuda::adamw_multi_tensor<__half>(empty.table(), 1e-3f, 0.9f, 0.95f, 1e-8f, 1, nullptr);
  const cuda::AdamWTableOwner zero_size({cuda::AdamWTensor{}}, nullptr);
  EXPECT_EQ(zero_size.table().tensors, 1);
  EXPECT_EQ(zero_size.table().chunks, 0);
}

}  // namespace
}  // namespace ptdp
