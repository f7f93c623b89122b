// TokenUploader: double-buffered pinned staging, a copy stream, events.
#include "core/kernels/cuda/token_upload.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/io/poll_wait.h"
#include "core/kernels/cuda/cuda_check.h"

namespace ptdp::cuda {

TokenUploader::TokenUploader(cudaStream_t compute, double timeout_s) : compute_(compute), timeout_s_(timeout_s) {
  PTDP_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
  PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&compute_ready_, cudaEventDisableTiming));
  for (Staging& s : staging_) PTDP_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
}

// Errors are reported by the CUDA calls that follow, not thrown from here.
TokenUploader::~TokenUploader() {
  cudaStreamSynchronize(copy_);
  for (Staging& s : staging_) {
    if (s.host != nullptr) cudaFreeHost(s.host);
    if (s.copied != nullptr) cudaEventDestroy(s.copied);
  }
  if (compute_ready_ != nullptr) cudaEventDestroy(compute_ready_);
  if (copy_ != nullptr) cudaStreamDestroy(copy_);
}

void TokenUploader::wait_until_free(Staging& s) {
  if (!s.in_use) return;
  const bool done = poll_until(timeout_s_, [&](long) {
    const cudaError_t e = cudaEventQuery(s.copied);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) PTDP_CUDA_CHECK(e);
    (void)cudaGetLastError();  // "not ready" is no error: keep it from the next launch check
    return false;
  });
  if (!done)
    throw std::runtime_error(where(this_process()) + ": token upload: the previous copy from its staging buffer did not finish within " +
                             std::to_string(static_cast<int>(timeout_s_)) + " s (the compute stream it waits for is stuck)");
  s.in_use = false;
}

void TokenUploader::upload(const std::int32_t* host, std::int32_t* dst, std::int64_t n) {
  if (n <= 0) return;
  Staging& s = staging_[next_];
  next_ = 1 - next_;
  wait_until_free(s);
  if (s.capacity < n) {
    if (s.host != nullptr) PTDP_CUDA_CHECK(cudaFreeHost(s.host));
    s.host = nullptr;
    s.capacity = 0;
    PTDP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&s.host), static_cast<std::size_t>(n) * sizeof(std::int32_t)));
    s.capacity = n;
  }
  std::memcpy(s.host, host, static_cast<std::size_t>(n) * sizeof(std::int32_t));
  PTDP_CUDA_CHECK(cudaEventRecord(compute_ready_, compute_));
  PTDP_CUDA_CHECK(cudaStreamWaitEvent(copy_, compute_ready_, 0));
  PTDP_CUDA_CHECK(cudaMemcpyAsync(dst, s.host, static_cast<std::size_t>(n) * sizeof(std::int32_t),
                                  cudaMemcpyHostToDevice, copy_));
  PTDP_CUDA_CHECK(cudaEventRecord(s.copied, copy_));
  s.in_use = true;
  PTDP_CUDA_CHECK(cudaStreamWaitEvent(compute_, s.copied, 0));
}

PinnedScalar::PinnedScalar() { PTDP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&value_), sizeof(double))); }

PinnedScalar::~PinnedScalar() {
  if (value_ != nullptr) cudaFreeHost(value_);
}

}  // namespace ptdp::cuda
