// Uploading the host-built tables of a multi-tensor launch (pointers, sizes,
// chunk lists) into device memory that the owner frees.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "core/kernels/cuda/cuda_check.h"

namespace ptdp::cuda {

// A device copy of `host`, queued on `st` (host must outlive the copy), noted
// in `allocations`; null for an empty table.
template <class X> X* upload_table(const std::vector<X>& host, std::vector<void*>& allocations, cudaStream_t st) {
  if (host.empty()) return nullptr;
  void* dst = nullptr;
  PTDP_CUDA_CHECK(cudaMalloc(&dst, host.size() * sizeof(X)));
  allocations.push_back(dst);
  PTDP_CUDA_CHECK(cudaMemcpyAsync(dst, host.data(), host.size() * sizeof(X), cudaMemcpyHostToDevice, st));
  return static_cast<X*>(dst);
}

}  // namespace ptdp::cuda
