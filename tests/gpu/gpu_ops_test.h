// CudaOps on this process's GPU for the GPU tests that go through the backend
// (test_cuda_ops.cpp, test_cudnn_attention.cpp): its own caching allocator,
// and host vectors uploaded to / downloaded from its tensors as fp32.
#pragma once
#include <utility>
#include <vector>

#include "core/kernels/cuda/cuda_ops.h"

namespace ptdp::gputest {

struct Gpu {
  CudaCachingAllocator alloc{0};
  CudaOps ops;
  explicit Gpu(DType t = DType::bf16, bool fused = true, Attention att = Attention::flash)
      : ops(alloc, {t, fused, att, 60}) {}
  Tensor upload(const std::vector<float>& v, Shape shape, DType t) {
    Tensor x = ops.empty(std::move(shape), t);
    ops.upload_f32(v.data(), x);
    return x;
  }
  std::vector<float> download(const Tensor& x) {
    std::vector<float> v(static_cast<std::size_t>(x.numel()));
    ops.download_f32(x, v.data());
    return v;
  }
};

}  // namespace ptdp::gputest
