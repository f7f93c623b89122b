// Asynchronous uploads of token ids (and any small int32 arrays): the host
// values go into one of two pinned staging buffers, a copy stream moves them to
// the device, and the compute stream waits on an event, so no upload drains the
// compute stream. Reusing a staging buffer waits (with a deadline) only for the
// copy that last read it. Also a pinned fp64 scalar for read-backs.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ptdp::cuda {

class TokenUploader {
 public:
  // `compute`: the stream whose ops read the uploaded arrays; `timeout_s`:
  // deadline of a wait for a staging buffer.
  TokenUploader(cudaStream_t compute, double timeout_s);
  ~TokenUploader();
  TokenUploader(const TokenUploader&) = delete;
  TokenUploader& operator=(const TokenUploader&) = delete;

  // dst (device, n values) = host (n values). Returns once host is copied into
  // pinned memory: the caller may reuse it at once. The copy runs after the
  // compute stream's queued work (the caching allocator may have handed out dst
  // while queued kernels still read its previous tensor), and the compute
  // stream's later work runs after the copy.
  void upload(const std::int32_t* host, std::int32_t* dst, std::int64_t n);

 private:
  struct Staging {
    std::int32_t* host = nullptr;  // pinned
    std::int64_t capacity = 0;     // values
    cudaEvent_t copied = nullptr;  // recorded on the copy stream after its last copy
    bool in_use = false;           // a copy was queued since it was last waited for
  };
  void wait_until_free(Staging& s);

  cudaStream_t compute_;
  double timeout_s_;
  cudaStream_t copy_ = nullptr;
  cudaEvent_t compute_ready_ = nullptr;
  Staging staging_[2];
  int next_ = 0;
};

// One fp64 value in pinned host memory (the target of asynchronous read-backs).
class PinnedScalar {
 public:
  PinnedScalar();
  ~PinnedScalar();
  PinnedScalar(const PinnedScalar&) = delete;
  PinnedScalar& operator=(const PinnedScalar&) = delete;
  double* get() const { return value_; }

 private:
  double* value_ = nullptr;
};

}  // namespace ptdp::cuda
