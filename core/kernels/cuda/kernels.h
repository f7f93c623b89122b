// Launchers of ptdp's CUDA kernels (host-callable). Each is templated on the
// 16-bit element type T (__nv_bfloat16 or __half) with fp32 accumulation,
// mirrors the fp32 reference of core/kernels/cpu (same layouts and meaning),
// computes its grid, launches on `stream` and checks the launch.
// Letters: n rows (tokens), h hidden, k/m linear in/out, Vt vocabulary shard,
// b micro-batch, s sequence, a heads on this rank, g key/value heads, d head dim,
// f the MLP width on this rank.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ptdp::cuda {

// --- element-wise (elementwise.cu) --------------------------------------------
template <class T> void gelu_forward(const T* x, std::int64_t n, T* y, cudaStream_t st);
template <class T> void gelu_backward(const T* dy, const T* x, std::int64_t n, T* dx, cudaStream_t st);
// y (rows, m) = gelu(pre + bias) with pre written back as pre + bias: the fused bias+GeLU.
template <class T> void bias_gelu_forward(T* pre, const T* bias, std::int64_t rows, std::int64_t m, T* y, cudaStream_t st);
template <class T> void add(const T* a, const T* b, std::int64_t n, T* out, cudaStream_t st);  // out may alias
template <class T> void bias_add(T* y, const T* bias, std::int64_t rows, std::int64_t m, cudaStream_t st);
// dbias (m, fp32) += Σ rows of dy, in a fixed order (no atomics).
template <class T> void bias_backward(const T* dy, std::int64_t rows, std::int64_t m, float* dbias, cudaStream_t st);
// x *= alpha (T = float, __half, __nv_bfloat16).
template <class T> void scale(T* x, std::int64_t n, float alpha, cudaStream_t st);
// *out (fp64 device scalar) = Σ x² accumulated in fp32 per block, fp64 across
// blocks in a fixed order (no atomics).
void sum_squares(const float* x, std::int64_t n, double* out, cudaStream_t st);
// Conversions between fp32 and T, either way (same element count).
template <class T> void cast_from_float(const float* src, std::int64_t n, T* dst, cudaStream_t st);
template <class T> void cast_to_float(const T* src, std::int64_t n, float* dst, cudaStream_t st);

// --- fused residual (fused_residual.cu) ---------------------------------------------
// out (rows, h) = y + bias (h) + residual in fp32, rounded once; out may alias y or residual.
template <class T>
void bias_residual_add(const T* y, const T* bias, const T* residual, std::int64_t rows, std::int64_t h, T* out,
                       cudaStream_t st);
// acc (n, fp32) += partial (n): folds a GEMM epilogue's (overwritten) bias gradient into a gradient.
template <class T> void accumulate_f32(const T* partial, std::int64_t n, float* acc, cudaStream_t st);

// --- layernorm over h (layernorm.cu); mean, rstd fp32 (n) ---------------------------
template <class T>
void layernorm_forward(const T* x, const T* gamma, const T* beta, std::int64_t n, std::int64_t h, float eps, T* y,
                       float* mean, float* rstd, cudaStream_t st);
// sum (n, h) = y + bias (h) + residual rounded to T (sum may alias y or
// residual), then ln, mean, rstd = layernorm_forward(sum): bitwise the same as
// bias_residual_add followed by layernorm_forward, with one kernel.
template <class T>
void bias_residual_layernorm(const T* y, const T* bias, const T* residual, const T* gamma, const T* beta,
                             std::int64_t n, std::int64_t h, float eps, T* sum, T* ln, float* mean, float* rstd,
                             cudaStream_t st);
// dx (n, h) overwritten, may alias dy; dgamma, dbeta (h, fp32) accumulated in a
// fixed order (no atomics: the same bits every run).
template <class T>
void layernorm_backward(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, std::int64_t n,
                        std::int64_t h, T* dx, float* dgamma, float* dbeta, cudaStream_t st);

// --- RMSNorm over h (rmsnorm.cu); rstd fp32 (n) ----------------------------------------
// y (n, h) = x·rstd·gamma, rstd = 1/sqrt(mean(x²) + eps).
template <class T>
void rmsnorm_forward(const T* x, const T* gamma, std::int64_t n, std::int64_t h, float eps, T* y, float* rstd,
                     cudaStream_t st);
// dx (n, h) overwritten, may alias dy; dgamma (h, fp32) += Σ rows of dy·x·rstd
// in a fixed order (no atomics: the same bits every run).
template <class T>
void rmsnorm_backward(const T* dy, const T* x, const T* gamma, const float* rstd, std::int64_t n, std::int64_t h,
                      T* dx, float* dgamma, cudaStream_t st);

// --- SwiGLU (swiglu.cu): pre (n, 2f) = [gate | up] per row, y (n, f) = silu(gate)·up ---
template <class T> void swiglu_forward(const T* pre, std::int64_t n, std::int64_t f, T* y, cudaStream_t st);
// dpre (n, 2f) overwritten from dy (n, f); may alias pre.
template <class T>
void swiglu_backward(const T* dy, const T* pre, std::int64_t n, std::int64_t f, T* dpre, cudaStream_t st);

// --- rotary position embedding (rope.cu), in place, rotate-half ------------------------
// q (b, s, a, d) and the k half of kv (b, s, g, 2, d): pairs (j, j + d/2) of
// the token at position p turn by p·theta^(-2j/d); backward turns dq, dk back.
template <class T>
void rope_forward(T* q, T* kv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g, std::int64_t head_dim,
                  double theta, cudaStream_t st);
template <class T>
void rope_backward(T* dq, T* dkv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g, std::int64_t head_dim,
                   double theta, cudaStream_t st);

// --- embedding (embedding.cu), vocabulary shard [vocab_start, +Vt) -------------------
template <class T>
void embedding_forward(const std::int32_t* tokens, std::int64_t n, const T* wte, std::int64_t vocab_start,
                       std::int64_t vt, std::int64_t h, T* out, cudaStream_t st);
// dwte (Vt, h, fp32) += rows of dout for tokens in the shard.
template <class T>
void embedding_backward(const std::int32_t* tokens, std::int64_t n, const T* dout, std::int64_t vocab_start,
                        std::int64_t vt, std::int64_t h, float* dwte, cudaStream_t st);
// As embedding_backward without atomics: each token's rows are added in position
// order (bitwise the same on every run; scratch from the stream's pool).
template <class T>
void embedding_backward_deterministic(const std::int32_t* tokens, std::int64_t n, const T* dout,
                                      std::int64_t vocab_start, std::int64_t vt, std::int64_t h, float* dwte,
                                      cudaStream_t st);
// x (b, s, h) += wpe (≥s, h);  dwpe (≥s, h, fp32) += Σ over b of dx.
template <class T> void position_forward(const T* wpe, std::int64_t b, std::int64_t s, std::int64_t h, T* x, cudaStream_t st);
template <class T>
void position_backward(const T* dx, std::int64_t b, std::int64_t s, std::int64_t h, float* dwpe, cudaStream_t st);

// --- causal mask + softmax over scores (b·a, s, s) (softmax.cu) ---------------------
// probs = softmax(scores with the upper triangle masked): one kernel (fused) or
// two that each read and write memory (mask, then softmax: the readable unfused
// variant). The scores already carry the 1/sqrt(d) scale (the Q·Kᵀ GEMM's alpha).
// probs may alias scores.
template <class T>
void causal_softmax(const T* scores, std::int64_t batch, std::int64_t s, T* probs, bool fused, cudaStream_t st);
// dscores = probs ∘ (dprobs − rowsum(dprobs ∘ probs)) (without the scale: the
// dQ and dK GEMMs apply it as their alpha); may alias dprobs.
template <class T>
void causal_softmax_backward(const T* probs, const T* dprobs, std::int64_t batch, std::int64_t s, T* dscores,
                             cudaStream_t st);

// --- vocabulary-parallel cross-entropy pieces (cross_entropy.cu), logits (n, Vt) ------
template <class T> void ce_row_max(const T* logits, std::int64_t n, std::int64_t vt, float* row_max, cudaStream_t st);
template <class T>
void ce_row_sum_exp(const T* logits, std::int64_t n, std::int64_t vt, const float* row_max, float* sum_exp, cudaStream_t st);
template <class T>
void ce_target_logit(const T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t vt,
                     std::int64_t vocab_start, float* target_logit, cudaStream_t st);
void ce_loss(const float* row_max, const float* sum_exp, const float* target_logit, std::int64_t n, float* loss,
             cudaStream_t st);
template <class T>
void ce_backward(const T* logits, const std::int32_t* targets, const float* row_max, const float* sum_exp,
                 std::int64_t n, std::int64_t vt, std::int64_t vocab_start, float scale, T* dlogits, cudaStream_t st);

// --- multi-tensor AdamW (adamw.cu) ---------------------------------------------------
// One launch over many tensors: for tensor i, masters[i], grads[i], m[i], v[i] are
// fp32 arrays of sizes[i] elements; weights[i] (T, may be null) receives the
// updated master rounded to T. decay[i] is its weight decay. Pointer tables live
// in device memory (AdamWTable::upload).
struct AdamWTable {
  int tensors = 0;
  float** masters = nullptr;
  const float** grads = nullptr;
  float** m = nullptr;
  float** v = nullptr;
  void** weights = nullptr;
  const std::int64_t* sizes = nullptr;
  const float* decay = nullptr;
  // Chunks of at most kChunk elements: (tensor, first element) pairs, for the grid.
  const int* chunk_tensor = nullptr;
  const std::int64_t* chunk_start = nullptr;
  int chunks = 0;
  static constexpr std::int64_t kChunk = 65536;
};
template <class T>
void adamw_multi_tensor(const AdamWTable& table, float lr, float beta1, float beta2, float eps, int step,
                        cudaStream_t st);

}  // namespace ptdp::cuda
