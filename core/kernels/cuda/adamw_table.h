// Host-side builder of the device tables of the multi-tensor AdamW launch
// (AdamWTable of kernels.h): pointers, sizes, decays and the chunk list are
// copied to device memory once and freed with the owner.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {

// One tensor of the optimizer step; every pointer is device memory.
struct AdamWTensor {
  float* master = nullptr;      // fp32 master weights (size)
  const float* grad = nullptr;  // fp32 gradient (size)
  float* m = nullptr;           // first moment (size)
  float* v = nullptr;           // second moment (size)
  void* weight = nullptr;       // compute-type copy (size, T of the launch), or null
  std::int64_t size = 0;        // elements
  float decay = 0.0f;           // weight decay of this tensor (0 for biases and layernorm)
};

// Owns the device tables of one AdamWTable. The uploads are queued on `st`
// (the host copies live as long as the owner), so launches on `st` see them.
class AdamWTableOwner {
 public:
  AdamWTableOwner(const std::vector<AdamWTensor>& tensors, cudaStream_t st);
  ~AdamWTableOwner();
  AdamWTableOwner(const AdamWTableOwner&) = delete;
  AdamWTableOwner& operator=(const AdamWTableOwner&) = delete;

  const AdamWTable& table() const { return table_; }

 private:
  template <class X> X* upload(const std::vector<X>& host, cudaStream_t st);

  AdamWTable table_;
  // Host sources of the asynchronous uploads, kept alive with the owner.
  std::vector<float*> masters_, m_, v_;
  std::vector<const float*> grads_;
  std::vector<void*> weights_;
  std::vector<std::int64_t> sizes_, chunk_start_;
  std::vector<float> decay_;
  std::vector<int> chunk_tensor_;
  std::vector<void*> device_;  // every allocation, freed by the destructor
};

}  // namespace ptdp::cuda
