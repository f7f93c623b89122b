// A CudaOps on GPU 0 for the GPU tests of the backend, with host <-> device
// copies through fp32 vectors; Gpu: the same with the common options spelled out.
#pragma once
#include <vector>

#include "core/kernels/cuda/cuda_ops.h"

namespace ptdp::gputest {

struct CudaOpsHarness {
  CudaPoolAllocator alloc{0};
  CudaOps ops;
  explicit CudaOpsHarness(const CudaOpsOptions& options) : ops(alloc, options) {}
  // v converted to dtype t (the compute type when omitted).
  Tensor upload(const std::vector<float>& v, Shape shape, DType t) {
    Tensor x = ops.empty(std::move(shape), t);
    ops.upload_f32(v.data(), x);
    return x;
  }
  Tensor upload(const std::vector<float>& v, Shape shape) { return upload(v, std::move(shape), ops.compute_dtype()); }
  std::vector<float> download(const Tensor& x) {
    std::vector<float> v(static_cast<std::size_t>(x.numel()));
    ops.synchronize();
    ops.download_f32(x, v.data());
    return v;
  }
};

struct Gpu : CudaOpsHarness {
  explicit Gpu(DType t = DType::bf16, bool fused = true, Attention att = Attention::flash)
      : CudaOpsHarness({t, fused, att, 60}) {}
};

}  // namespace ptdp::gputest
