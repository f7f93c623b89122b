// CudaOps: causal self-attention, fused (flash: cuDNN's SDPA on tensor cores,
// cudnn_attention.h) or unfused (batched GEMMs around the mask+softmax
// kernels: the paper's path). Letters: b micro-batch, s sequence, a heads on
// this rank, d head dim; qkv (b, s, a, 3, d), out (b, s, a, d), probabilities
// (b, a, s, s), cuDNN's softmax statistics (b, a, s) fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <stdexcept>

#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/cudnn_attention.h"
#include "core/kernels/cuda/gemm.h"
#include "core/kernels/cuda/kernels.h"

namespace ptdp {

namespace {

template <class T> T* typed(const Tensor& t) { return static_cast<T*>(t.raw()); }
template <class T> cuda::ElemType elem() {
  return std::is_same_v<T, __nv_bfloat16> ? cuda::ElemType::bf16 : cuda::ElemType::f16;
}

// Pointers to one head's q, k or v rows inside qkv (row stride a·3·d).
struct HeadView {
  std::int64_t b, s, a, d;
  std::int64_t qkv_row() const { return a * 3 * d; }
  std::int64_t qkv_offset(std::int64_t ib, int which) const { return ib * s * a * 3 * d + which * d; }
};

// 1/sqrt(d): the alpha of the Q·Kᵀ GEMM forward and of the dQ, dK GEMMs backward.
float inv_sqrt(std::int64_t d) { return 1.0f / std::sqrt(static_cast<float>(d)); }

}  // namespace

cuda::CudnnAttention& CudaOps::cudnn_attention() {
#ifdef PTDP_HAVE_CUDNN
  if (!cudnn_attention_) cudnn_attention_ = cuda::make_cudnn_attention(stream_);
  return *cudnn_attention_;
#else
  throw std::runtime_error("plan.attention=\"flash\" runs cuDNN's fused attention, and this build has no cuDNN "
                           "(run scripts/setup.sh for its frontend, or use \"attention\": \"unfused\")");
#endif
}

Tensor CudaOps::attention_forward(const Tensor& qkv, int heads, Tensor& out) {
  const std::int64_t b = qkv.dim(0), s = qkv.dim(1), d = qkv.dim(2) / (3 * heads);
  if (options_.attention == Attention::unfused) {
    Tensor probs = empty({b, heads, s, s});
    attention_unfused_forward(qkv, heads, out, probs);
    return probs;
  }
  const cuda::SdpaKey key{b, s, heads, d, options_.compute, options_.deterministic};
  cuda::CudnnAttention& sdpa = cudnn_attention();
  Tensor stats = empty({b, heads, s}, DType::f32);
  const std::int64_t bytes = sdpa.forward_workspace_bytes(key);
  Tensor work = bytes > 0 ? empty({(bytes + 3) / 4}, DType::f32) : Tensor{};
  sdpa.forward(key, qkv.raw(), out.raw(), stats.data<float>(), bytes > 0 ? work.raw() : nullptr);
  return stats;
}

void CudaOps::attention_backward(const Tensor& dout, const Tensor& qkv, const Tensor& out, const Tensor& saved,
                                 int heads, Tensor& dqkv) {
  const std::int64_t b = qkv.dim(0), s = qkv.dim(1), d = qkv.dim(2) / (3 * heads);
  if (options_.attention == Attention::unfused) return attention_unfused_backward(dout, qkv, saved, heads, dqkv);
  if (saved.dtype() != DType::f32 || saved.numel() != b * heads * s)
    throw std::invalid_argument("cuda attention_backward: `saved` is not the forward's (b, a, s) fp32 statistics");
  const cuda::SdpaKey key{b, s, heads, d, options_.compute, options_.deterministic};
  cuda::CudnnAttention& sdpa = cudnn_attention();
  const std::int64_t bytes = sdpa.backward_workspace_bytes(key);
  Tensor work = bytes > 0 ? empty({(bytes + 3) / 4}, DType::f32) : Tensor{};
  sdpa.backward(key, qkv.raw(), out.raw(), dout.raw(), saved.data<float>(), dqkv.raw(),
                bytes > 0 ? work.raw() : nullptr);
}

// scores = Q·Kᵀ/sqrt(d) (the scale as the GEMM's alpha), probs = softmax(scores,
// causal), out = probs·V; per batch entry, GEMMs batched over the heads (head
// stride 3d in qkv, d in out).
void CudaOps::attention_unfused_forward(const Tensor& qkv, int heads, Tensor& out, Tensor& probs) {
  const HeadView v{qkv.dim(0), qkv.dim(1), heads, qkv.dim(2) / (3 * heads)};
  with_type([&](auto tag) {
    using T = decltype(tag);
    const T* base = typed<T>(qkv);
    for (std::int64_t ib = 0; ib < v.b; ++ib) {
      T* p = typed<T>(probs) + ib * v.a * v.s * v.s;
      cuda::GemmArgs g;  // scores (s, s) = Q (s, d) · K (s, d)ᵀ
      g.trans_b = true, g.m = v.s, g.n = v.s, g.k = v.d, g.alpha = inv_sqrt(v.d);
      g.a = base + v.qkv_offset(ib, 0), g.lda = v.qkv_row(), g.b = base + v.qkv_offset(ib, 1), g.ldb = v.qkv_row();
      g.c = p, g.ldc = v.s, g.ab = g.c_type = elem<T>();
      g.batch = static_cast<int>(v.a), g.stride_a = g.stride_b = 3 * v.d, g.stride_c = v.s * v.s;
      gemm_->run(g);
    }
    cuda::causal_softmax(typed<T>(probs), v.b * v.a, v.s, typed<T>(probs), options_.fused_ops, stream_);
    for (std::int64_t ib = 0; ib < v.b; ++ib) {
      cuda::GemmArgs g;  // out (s, d) = probs (s, s) · V (s, d)
      g.m = v.s, g.n = v.d, g.k = v.s;
      g.a = typed<T>(probs) + ib * v.a * v.s * v.s, g.lda = v.s, g.b = base + v.qkv_offset(ib, 2), g.ldb = v.qkv_row();
      g.c = typed<T>(out) + ib * v.s * v.a * v.d, g.ldc = v.a * v.d, g.ab = g.c_type = elem<T>();
      g.batch = static_cast<int>(v.a), g.stride_a = v.s * v.s, g.stride_b = 3 * v.d, g.stride_c = v.d;
      gemm_->run(g);
    }
  });
}

void CudaOps::attention_unfused_backward(const Tensor& dout, const Tensor& qkv, const Tensor& probs, int heads,
                                         Tensor& dqkv) {
  const HeadView v{qkv.dim(0), qkv.dim(1), heads, qkv.dim(2) / (3 * heads)};
  Tensor dscores = empty(probs.shape());  // (b, a, s, s)
  with_type([&](auto tag) {
    using T = decltype(tag);
    const T* base = typed<T>(qkv);
    T* dbase = typed<T>(dqkv);
    const auto batched = [&](cuda::GemmArgs g, std::int64_t sa, std::int64_t sb, std::int64_t sc) {
      g.ab = g.c_type = elem<T>(), g.batch = static_cast<int>(v.a), g.stride_a = sa, g.stride_b = sb, g.stride_c = sc;
      gemm_->run(g);
    };
    for (std::int64_t ib = 0; ib < v.b; ++ib) {
      const T* p = typed<T>(probs) + ib * v.a * v.s * v.s;
      const T* dout_b = typed<T>(dout) + ib * v.s * v.a * v.d;
      T* ds = typed<T>(dscores) + ib * v.a * v.s * v.s;
      cuda::GemmArgs g;  // dprobs (s, s) = dout (s, d) · Vᵀ
      g.trans_b = true, g.m = v.s, g.n = v.s, g.k = v.d, g.a = dout_b, g.lda = v.a * v.d;
      g.b = base + v.qkv_offset(ib, 2), g.ldb = v.qkv_row(), g.c = ds, g.ldc = v.s;
      batched(g, v.d, 3 * v.d, v.s * v.s);
      g = {};  // dV (s, d) = probsᵀ (s, s) · dout (s, d)
      g.trans_a = true, g.m = v.s, g.n = v.d, g.k = v.s, g.a = p, g.lda = v.s, g.b = dout_b, g.ldb = v.a * v.d;
      g.c = dbase + v.qkv_offset(ib, 2), g.ldc = v.qkv_row();
      batched(g, v.s * v.s, v.d, 3 * v.d);
    }
    cuda::causal_softmax_backward(typed<T>(probs), typed<T>(dscores), v.b * v.a, v.s, typed<T>(dscores), stream_);
    for (std::int64_t ib = 0; ib < v.b; ++ib) {
      const T* ds = typed<T>(dscores) + ib * v.a * v.s * v.s;
      cuda::GemmArgs g;  // dQ (s, d) = dscores (s, s) · K (s, d) / sqrt(d)
      g.alpha = inv_sqrt(v.d), g.m = v.s, g.n = v.d, g.k = v.s, g.a = ds, g.lda = v.s;
      g.b = base + v.qkv_offset(ib, 1), g.ldb = v.qkv_row(), g.c = dbase + v.qkv_offset(ib, 0), g.ldc = v.qkv_row();
      batched(g, v.s * v.s, 3 * v.d, 3 * v.d);
      g = {};  // dK (s, d) = dscoresᵀ (s, s) · Q (s, d) / sqrt(d)
      g.alpha = inv_sqrt(v.d), g.trans_a = true, g.m = v.s, g.n = v.d, g.k = v.s, g.a = ds, g.lda = v.s;
      g.b = base + v.qkv_offset(ib, 0), g.ldb = v.qkv_row(), g.c = dbase + v.qkv_offset(ib, 1), g.ldc = v.qkv_row();
      batched(g, v.s * v.s, 3 * v.d, 3 * v.d);
    }
  });
}

}  // namespace ptdp
