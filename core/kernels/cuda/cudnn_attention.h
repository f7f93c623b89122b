// Causal self-attention on tensor cores through cuDNN's fused SDPA (the C++
// frontend's graph API): the fast path behind `"attention": "flash"`, with
// grouped-query attention (cuDNN takes K and V with fewer heads than Q; query
// head i reads kv head i/(a/g)). Q is read in place from q and K, V from kv,
// dQ, dK, dV written in place into dq and dkv, described by strides, so
// nothing is copied. Letters: b micro-batch, s sequence, a query heads and g
// key/value heads on this rank, d head dim; q, dq, out, dout (b, s, a, d);
// kv, dkv (b, s, g, 2, d), k then v of each head; stats (b, a, s) fp32, the
// natural-log log-sum-exp of each row of scaled scores, kept for the backward.
// Built only with cuDNN and its frontend (cudnn_attention_cudnn.cpp, PTDP_HAVE_CUDNN).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/tensor/dtype.h"

namespace ptdp::cuda {

// What a cached graph is built for: one forward and one backward graph per key.
struct SdpaKey {
  std::int64_t b = 0, s = 0, a = 0, g = 0, head_dim = 0;  // g kv heads, dividing a (g = a: multi-head)
  DType type = DType::bf16;    // bf16 or f16 (q, k, v, out and their gradients)
  bool deterministic = false;  // backward: cuDNN's deterministic algorithm (no atomics in dQ)
  auto operator<=>(const SdpaKey&) const = default;
};

// One cuDNN handle bound to `stream` and the graphs built on it, each with its
// workspace size, built on first use of its key. Scale 1/sqrt(d), causal mask
// (query t sees keys u ≤ t). Every cuDNN and frontend status is checked.
class CudnnAttention {
 public:
  explicit CudnnAttention(cudaStream_t stream);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // Bytes of device workspace forward / backward of `key` need (builds the graph if new).
  std::int64_t forward_workspace_bytes(const SdpaKey& key);
  std::int64_t backward_workspace_bytes(const SdpaKey& key);

  // out = softmax(q·kᵀ/sqrt(d), causal)·v; stats as above. `workspace` holds
  // forward_workspace_bytes(key) bytes (may be null when that is 0).
  void forward(const SdpaKey& key, const void* q, const void* kv, void* out, float* stats, void* workspace);
  // dq, dkv overwritten from dout, q, kv, the forward's out and stats.
  void backward(const SdpaKey& key, const void* q, const void* kv, const void* out, const void* dout,
                const float* stats, void* dq, void* dkv, void* workspace);

  // Graphs built so far (forward and backward together): a repeated key builds none.
  int graphs_built() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The frontend's own check of the forward and backward graph descriptions of
// `key` (dims, strides, types, options) for a GPU of compute capability `sm`
// (80 Ampere, 90 Hopper), without a device or handle: "" when both validate,
// else the frontend's message. Lets a machine without a GPU test the graphs.
std::string sdpa_graphs_invalid(const SdpaKey& key, int sm);

// Made only by a build with cuDNN (a shared_ptr, so that holders need not see the type).
std::shared_ptr<CudnnAttention> make_cudnn_attention(cudaStream_t stream);

}  // namespace ptdp::cuda
