// CudaOps: causal self-attention with grouped-query attention (ops.h), fused
// (flash: cuDNN's SDPA on tensor cores, cudnn_attention.h) or unfused (batched
// GEMMs around the mask+softmax kernels: the paper's path). Letters: b
// micro-batch, s sequence, a query heads and g key/value heads on this rank, r
// = a/g query heads a kv head serves, d head dim; q, dq, out (b, s, a, d); kv,
// dkv (b, s, g, 2, d); probabilities (b, a, s, s); cuDNN's softmax statistics
// (b, a, s) fp32. Query head i = j·r + m reads kv head j.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <stdexcept>

#include "core/kernels/cuda/attention_shape.h"
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

// Element offsets of one head's rows: the unfused path's GEMMs take, for one
// batch entry ib and one m < r, the g heads i = j·r + m (j < g) as a batch.
struct HeadView {
  cuda::AttentionShape x;
  std::int64_t q_row() const { return x.a * x.head_dim; }       // row stride of q, dq, out, dout
  std::int64_t kv_row() const { return x.g * 2 * x.head_dim; }  // row stride of kv, dkv
  std::int64_t q_offset(std::int64_t ib, std::int64_t m) const { return ib * x.s * q_row() + m * x.head_dim; }
  std::int64_t kv_offset(std::int64_t ib, int which) const {  // 0 k, 1 v
    return ib * x.s * kv_row() + which * x.head_dim;
  }
  std::int64_t probs_offset(std::int64_t ib, std::int64_t m) const { return (ib * x.a + m) * x.s * x.s; }
  // Batch strides over j: query heads r apart, kv heads one apart, probabilities r·s·s apart.
  std::int64_t q_stride() const { return x.group() * x.head_dim; }
  std::int64_t kv_stride() const { return 2 * x.head_dim; }
  std::int64_t probs_stride() const { return x.group() * x.s * x.s; }
};

// 1/sqrt(d): the alpha of the Q·Kᵀ GEMM forward and of the dQ, dK GEMMs backward.
float inv_sqrt(std::int64_t head_dim) { return 1.0f / std::sqrt(static_cast<float>(head_dim)); }

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

Tensor CudaOps::attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) {
  const cuda::AttentionShape x = cuda::attention_shape(q, kv, "attention_forward");
  if (out.numel() != q.numel()) throw std::invalid_argument("cuda attention_forward: out is not (b, s, a, d)");
  if (options_.attention == Attention::unfused) {
    Tensor probs = empty({x.b, x.a, x.s, x.s});
    attention_unfused_forward(q, kv, out, probs);
    return probs;
  }
  const cuda::SdpaKey key{x.b, x.s, x.a, x.g, x.head_dim, options_.compute, options_.deterministic};
  cuda::CudnnAttention& sdpa = cudnn_attention();
  Tensor stats = empty({x.b, x.a, x.s}, DType::f32);
  const std::int64_t bytes = sdpa.forward_workspace_bytes(key);
  Tensor work = bytes > 0 ? empty({(bytes + 3) / 4}, DType::f32) : Tensor{};
  sdpa.forward(key, q.raw(), kv.raw(), out.raw(), stats.data<float>(), bytes > 0 ? work.raw() : nullptr);
  return stats;
}

void CudaOps::attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& out,
                                 const Tensor& saved, Tensor& dq, Tensor& dkv) {
  const cuda::AttentionShape x = cuda::attention_shape(q, kv, "attention_backward");
  if (dq.numel() != q.numel() || dkv.numel() != kv.numel() || dout.numel() != q.numel())
    throw std::invalid_argument("cuda attention_backward: dout, dq are not (b, s, a, d) or dkv not (b, s, g, 2, d)");
  if (options_.attention == Attention::unfused) return attention_unfused_backward(dout, q, kv, saved, dq, dkv);
  if (saved.dtype() != DType::f32 || saved.numel() != x.b * x.a * x.s)
    throw std::invalid_argument("cuda attention_backward: `saved` is not the forward's (b, a, s) fp32 statistics");
  const cuda::SdpaKey key{x.b, x.s, x.a, x.g, x.head_dim, options_.compute, options_.deterministic};
  cuda::CudnnAttention& sdpa = cudnn_attention();
  const std::int64_t bytes = sdpa.backward_workspace_bytes(key);
  Tensor work = bytes > 0 ? empty({(bytes + 3) / 4}, DType::f32) : Tensor{};
  sdpa.backward(key, q.raw(), kv.raw(), out.raw(), dout.raw(), saved.data<float>(), dq.raw(), dkv.raw(),
                bytes > 0 ? work.raw() : nullptr);
}

// scores = Q·Kᵀ/sqrt(d) (the scale as the GEMM's alpha), probs = softmax(scores,
// causal), out = probs·V; per batch entry and m < r, GEMMs batched over the g
// kv heads (query head j·r + m against kv head j).
void CudaOps::attention_unfused_forward(const Tensor& q, const Tensor& kv, Tensor& out, Tensor& probs) {
  const HeadView v{cuda::attention_shape(q, kv, "attention_forward")};
  const auto& x = v.x;
  with_type([&](auto tag) {
    using T = decltype(tag);
    const auto batched = [&](cuda::GemmArgs g, std::int64_t sa, std::int64_t sb, std::int64_t sc) {
      g.ab = g.c_type = elem<T>(), g.batch = static_cast<int>(x.g), g.stride_a = sa, g.stride_b = sb, g.stride_c = sc;
      gemm_->run(g);
    };
    for (std::int64_t ib = 0; ib < x.b; ++ib)
      for (std::int64_t m = 0; m < x.group(); ++m) {
        cuda::GemmArgs g;  // scores (s, s) = Q (s, d) · K (s, d)ᵀ
        g.trans_b = true, g.m = x.s, g.n = x.s, g.k = x.head_dim, g.alpha = inv_sqrt(x.head_dim);
        g.a = typed<T>(q) + v.q_offset(ib, m), g.lda = v.q_row(), g.b = typed<T>(kv) + v.kv_offset(ib, 0);
        g.ldb = v.kv_row(), g.c = typed<T>(probs) + v.probs_offset(ib, m), g.ldc = x.s;
        batched(g, v.q_stride(), v.kv_stride(), v.probs_stride());
      }
    cuda::causal_softmax(typed<T>(probs), x.b * x.a, x.s, typed<T>(probs), options_.fused_ops, stream_);
    for (std::int64_t ib = 0; ib < x.b; ++ib)
      for (std::int64_t m = 0; m < x.group(); ++m) {
        cuda::GemmArgs g;  // out (s, d) = probs (s, s) · V (s, d)
        g.m = x.s, g.n = x.head_dim, g.k = x.s, g.a = typed<T>(probs) + v.probs_offset(ib, m), g.lda = x.s;
        g.b = typed<T>(kv) + v.kv_offset(ib, 1), g.ldb = v.kv_row();
        g.c = typed<T>(out) + v.q_offset(ib, m), g.ldc = v.q_row();
        batched(g, v.probs_stride(), v.kv_stride(), v.q_stride());
      }
  });
}

// dV_j = Σ_m probs_iᵀ·dout_i and dK_j = Σ_m dscores_iᵀ·Q_i/sqrt(d) over the r
// query heads i = j·r + m of kv head j: with r > 1 the r GEMMs accumulate
// (beta = 1) into an fp32 copy of dkv, rounded to T once at the end.
void CudaOps::attention_unfused_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& probs,
                                         Tensor& dq, Tensor& dkv) {
  const HeadView v{cuda::attention_shape(q, kv, "attention_backward")};
  const auto& x = v.x;
  Tensor dscores = empty(probs.shape());  // (b, a, s, s)
  const bool accumulate = x.group() > 1;
  Tensor dkv_acc = accumulate ? empty(kv.shape(), DType::f32) : Tensor{};
  with_type([&](auto tag) {
    using T = decltype(tag);
    const auto batched = [&](cuda::GemmArgs g, std::int64_t sa, std::int64_t sb, std::int64_t sc) {
      g.ab = elem<T>(), g.batch = static_cast<int>(x.g), g.stride_a = sa, g.stride_b = sb, g.stride_c = sc;
      gemm_->run(g);
    };
    // C of dK (which 0) or dV (1): dkv itself, or its fp32 accumulator; beta 1 after m = 0.
    const auto into_dkv = [&](cuda::GemmArgs& g, std::int64_t ib, int which, std::int64_t m) {
      g.ldc = v.kv_row(), g.beta = m > 0 ? 1.0f : 0.0f;
      g.c_type = accumulate ? cuda::ElemType::f32 : elem<T>();
      g.c = accumulate ? static_cast<void*>(dkv_acc.data<float>() + v.kv_offset(ib, which))
                       : static_cast<void*>(typed<T>(dkv) + v.kv_offset(ib, which));
    };
    for (std::int64_t ib = 0; ib < x.b; ++ib)
      for (std::int64_t m = 0; m < x.group(); ++m) {
        const T* dout_i = typed<T>(dout) + v.q_offset(ib, m);
        cuda::GemmArgs g;  // dprobs (s, s) = dout (s, d) · Vᵀ
        g.trans_b = true, g.m = x.s, g.n = x.s, g.k = x.head_dim, g.a = dout_i, g.lda = v.q_row();
        g.b = typed<T>(kv) + v.kv_offset(ib, 1), g.ldb = v.kv_row();
        g.c = typed<T>(dscores) + v.probs_offset(ib, m), g.ldc = x.s, g.c_type = elem<T>();
        batched(g, v.q_stride(), v.kv_stride(), v.probs_stride());
        g = {};  // dV (s, d) (+)= probsᵀ (s, s) · dout (s, d)
        g.trans_a = true, g.m = x.s, g.n = x.head_dim, g.k = x.s;
        g.a = typed<T>(probs) + v.probs_offset(ib, m), g.lda = x.s;
        g.b = dout_i, g.ldb = v.q_row();
        into_dkv(g, ib, 1, m);
        batched(g, v.probs_stride(), v.q_stride(), v.kv_stride());
      }
    cuda::causal_softmax_backward(typed<T>(probs), typed<T>(dscores), x.b * x.a, x.s, typed<T>(dscores), stream_);
    for (std::int64_t ib = 0; ib < x.b; ++ib)
      for (std::int64_t m = 0; m < x.group(); ++m) {
        const T* ds = typed<T>(dscores) + v.probs_offset(ib, m);
        cuda::GemmArgs g;  // dQ (s, d) = dscores (s, s) · K (s, d) / sqrt(d)
        g.alpha = inv_sqrt(x.head_dim), g.m = x.s, g.n = x.head_dim, g.k = x.s, g.a = ds, g.lda = x.s;
        g.b = typed<T>(kv) + v.kv_offset(ib, 0), g.ldb = v.kv_row();
        g.c = typed<T>(dq) + v.q_offset(ib, m), g.ldc = v.q_row(), g.c_type = elem<T>();
        batched(g, v.probs_stride(), v.kv_stride(), v.q_stride());
        g = {};  // dK (s, d) (+)= dscoresᵀ (s, s) · Q (s, d) / sqrt(d)
        g.alpha = inv_sqrt(x.head_dim), g.trans_a = true, g.m = x.s, g.n = x.head_dim, g.k = x.s, g.a = ds, g.lda = x.s;
        g.b = typed<T>(q) + v.q_offset(ib, m), g.ldb = v.q_row();
        into_dkv(g, ib, 0, m);
        batched(g, v.probs_stride(), v.q_stride(), v.kv_stride());
      }
    if (accumulate) cuda::cast_from_float(dkv_acc.data<float>(), dkv.numel(), typed<T>(dkv), stream_);
  });
}

}  // namespace ptdp
