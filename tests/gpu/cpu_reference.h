// The CPU backend (fp32 reference kernels) behind the Ops interface, for GPU
// tests that compare a CudaOps op with the same op of CpuOps on the same
// inputs (values exact in the 16-bit type), with host vectors in and out.
#pragma once
#include <vector>

#include "core/kernels/cpu/cpu_ops.h"
#include "core/tensor/allocator.h"

namespace ptdp::gputest {

struct CpuReference {
  CpuAllocator alloc;
  CpuOps backend{alloc};
  Ops& ops = backend;  // through the interface: every overload of Ops visible
  Tensor upload(const std::vector<float>& v, Shape shape) {
    Tensor x = ops.empty(std::move(shape), DType::f32);
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
