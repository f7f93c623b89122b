// Ops: the backend-neutral interface the model is written against. The CPU
// backend (fp32 reference kernels) and the CUDA backend (bf16/fp16 kernels)
// implement it, so the model, its tensor-parallel splits, recompute and the
// schedules are one code for both. Tensors live on the backend's device.
// Letters: n tokens (b·s), h hidden, k/m linear in/out, Vt vocabulary shard,
// a heads on this rank, d head dim.
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/kernels/adamw_params.h"
#include "core/tensor/param_init.h"
#include "core/tensor/tensor.h"

namespace ptdp {

// Every layernorm's and RMSNorm's epsilon, rstd = 1/sqrt(var + eps) (GPT-2's,
// Llama 3's and Megatron's default); the Hugging Face export writes it as layer_norm_epsilon.
inline constexpr double kLayerNormEps = 1e-5;

class Ops {
 public:
  explicit Ops(Allocator& alloc) : alloc_(alloc) {}
  virtual ~Ops() = default;
  Ops(const Ops&) = delete;
  Ops& operator=(const Ops&) = delete;

  virtual Device device() const = 0;
  // Element type of weights and activations (gradients and optimizer state are fp32).
  virtual DType compute_dtype() const = 0;
  virtual std::string name() const = 0;

  Allocator& allocator() const { return alloc_; }
  Tensor empty(Shape shape, DType type) const { return Tensor(alloc_, std::move(shape), type); }
  Tensor empty(Shape shape) const { return empty(std::move(shape), compute_dtype()); }
  Tensor zeros(Shape shape, DType type);
  Tensor zeros(Shape shape) { return zeros(std::move(shape), compute_dtype()); }

  // --- memory --------------------------------------------------------------
  virtual void zero(Tensor& x) = 0;
  virtual void copy(const Tensor& src, Tensor& dst) = 0;            // same dtype and size
  virtual void upload_f32(const float* host, Tensor& dst) = 0;      // converts to dst's dtype
  virtual void download_f32(const Tensor& src, float* host) = 0;    // converts from src's dtype
  // May return before the copy is done (CUDA stages the values in pinned memory
  // and copies on a copy stream that the compute stream waits for): the host
  // array may be reused at once, and ops queued after it see dst's new values.
  virtual void upload_i32(const std::int32_t* host, Tensor& dst) = 0;
  virtual void cast(const Tensor& src, Tensor& dst) = 0;            // between float dtypes
  // value (this rank's shard) := the initial values `how` describes (param_init.h);
  // the default computes them on the host and uploads, a GPU backend on the device.
  virtual void init_param(Tensor& value, const ParamInit& how);
  virtual void synchronize() {}                                     // wait for queued work
  // True when every op has finished when it returns (host timing is exact).
  virtual bool synchronous() const { return true; }
  // Calls so far in which a fused path the plan asked for was unavailable at
  // its shape and the unfused composition ran (a GPU's GEMM epilogues; the
  // backend says each new shape once on stderr). The CPU has no fused paths.
  virtual std::size_t fallback_runs() const { return 0; }

  // --- timing marks: record_mark(k) marks the point the backend's queue has
  // reached (host clock on the CPU, an event on a GPU stream); after
  // synchronize(), mark_seconds(k) is the time from mark 0. ------------------
  virtual void reset_marks(int count);
  virtual void record_mark(int k);
  virtual double mark_seconds(int k);

  // --- embedding (vocabulary-parallel) -------------------------------------
  // out (n, h) = wte rows of tokens in [vocab_start, +Vt), zero rows elsewhere.
  virtual void embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start,
                                 Tensor& out) = 0;
  // dwte (Vt, h) += scatter of dout (n, h) rows.
  virtual void embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start,
                                  Tensor& dwte) = 0;
  // x (b, s, h) += wpe (≥s, h);  dwpe (≥s, h) += sum over b of dx.
  virtual void position_forward(const Tensor& wpe, Tensor& x) = 0;
  virtual void position_backward(const Tensor& dx, Tensor& dwpe) = 0;

  // --- layernorm over h; mean, rstd (n) fp32 ---------------------------------
  virtual void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                 Tensor& mean, Tensor& rstd) = 0;
  virtual void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                  const Tensor& mean, const Tensor& rstd, Tensor& dx, Tensor& dgamma,
                                  Tensor& dbeta) = 0;

  // --- linear: y (n, m) = x (n, k) · w (m, k)ᵀ (+ bias (m) when defined) ---------
  virtual void linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) = 0;
  // dx (n, k) = dy · w when defined; dw (m, k) += dyᵀ · x when defined (a zero-bubble
  // B defers it to W); dbias (m) += Σ rows of dy when defined.
  virtual void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx,
                               Tensor& dw, Tensor& dbias) = 0;
  // y (n, m) += bias (m);  dbias (m) += Σ rows of dy.
  virtual void bias_add(Tensor& y, const Tensor& bias) = 0;
  virtual void bias_backward(const Tensor& dy, Tensor& dbias) = 0;

  // --- element-wise ----------------------------------------------------------
  virtual void gelu_forward(const Tensor& x, Tensor& y) = 0;
  virtual void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) = 0;
  // pre = x·wᵀ + bias, y = gelu(pre): a backend may fuse the two (bias-GeLU fusion).
  virtual void linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre,
                                   Tensor& y);
  virtual void add(const Tensor& a, const Tensor& b, Tensor& out) = 0;  // out may alias a or b
  // Backward of y = gelu(pre)·wᵀ (+ bias): dy (n, m) into the second linear,
  // w (m, f), gelu_out (n, f) its input, pre (n, f) the pre-activation;
  // dpre (n, f) overwritten; dw (m, f) += dyᵀ·gelu_out when defined; dbias (m) += Σ rows of dy
  // and dbias_pre (f) += Σ rows of dpre, each when defined. A backend may fuse
  // the GeLU gradient and dbias_pre into the data-gradient GEMM.
  virtual void linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                                    Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre);
  // out (n, h) = y + bias (h) + residual; out may alias y or residual. A
  // backend may fuse the three (one read of each, one rounding).
  virtual void bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out);
  // sum (n, h) = y + bias (h) + residual as bias_residual_add (sum may alias y
  // or residual), then ln, mean, rstd (n, fp32) = layernorm_forward(sum, gamma,
  // beta). A backend may fuse the two into one pass with the same results.
  virtual void bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual,
                                       const Tensor& gamma, const Tensor& beta, Tensor& sum, Tensor& ln,
                                       Tensor& mean, Tensor& rstd);
  virtual void scale(Tensor& x, double alpha) = 0;
  virtual double sum_squares(const Tensor& x) = 0;                     // Σ x², in double
  // Σ x² over every (fp32) tensor of xs, in double, with one wait for the device
  // (a backend may do it in one launch, deterministically). Default: sum_squares each.
  virtual double sum_squares_multi(const std::vector<const Tensor*>& xs);
  // acc (1 element, f64) += Σ x (fp32) without waiting for the device (loss sums).
  // Default: host memory only (the CPU backend), adding x in order.
  virtual void accumulate_sum(const Tensor& x, Tensor& acc);
  // The value of a 1-element f64 tensor; waits for the work queued before it.
  virtual double read_f64(const Tensor& scalar);

  // --- causal self-attention core with grouped-query attention -------------------
  // q (b, s, a, d): this rank's a query heads; kv (b, s, g, 2, d): its g key/value
  // heads, k then v of each; g divides a and query head i reads kv head i/(a/g)
  // (g = a: multi-head attention). out (b, s, a, d). Scale 1/sqrt(d), causal.
  // Returns what the backward needs beyond q and kv (probabilities on the CPU,
  // log-sum-exp on a fused GPU kernel).
  virtual Tensor attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) = 0;
  // dq (b, s, a, d) and dkv (b, s, g, 2, d) overwritten. `out` is the forward's
  // output (a fused backward needs rowsum(dout ∘ out)).
  virtual void attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& out,
                                  const Tensor& saved, Tensor& dq, Tensor& dkv) = 0;

  // --- RMSNorm over h (Llama's): y = x · rstd · gamma, rstd (n) fp32 = 1/sqrt(mean(x²) + eps),
  // eps = kLayerNormEps; x, y, dx (n, h), gamma (h); dgamma (h) fp32 accumulated (+=).
  virtual void rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) = 0;
  virtual void rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd,
                                Tensor& dx, Tensor& dgamma) = 0;

  // --- SwiGLU: pre (n, 2f) holds [gate | up] in each row; y (n, f) = silu(gate) ∘ up,
  // silu(x) = x·sigmoid(x). dpre (n, 2f) overwritten from dy (n, f).
  virtual void swiglu_forward(const Tensor& pre, Tensor& y) = 0;
  virtual void swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) = 0;

  // --- rotary position embedding, in place, rotate-half convention: in each head
  // the pairs (j, j + d/2), j < d/2, of the token at position p (its index in s)
  // turn by the angle p·theta^(-2j/d). forward rotates q (b, s, a, d) and the k
  // half of kv (b, s, g, 2, d); backward turns dq and dk back (the transpose).
  virtual void rope_forward(Tensor& q, Tensor& kv, double theta) = 0;
  virtual void rope_backward(Tensor& dq, Tensor& dkv, double theta) = 0;

  // --- vocabulary-parallel cross-entropy pieces; logits (n, Vt), per-row (n) fp32 ------
  virtual void ce_row_max(const Tensor& logits, Tensor& row_max) = 0;
  virtual void ce_row_sum_exp(const Tensor& logits, const Tensor& row_max, Tensor& sum_exp) = 0;
  virtual void ce_target_logit(const Tensor& logits, const Tensor& targets, std::int64_t vocab_start,
                               Tensor& target_logit) = 0;
  virtual void ce_loss(const Tensor& row_max, const Tensor& sum_exp, const Tensor& target_logit,
                       Tensor& loss) = 0;
  // dlogits (n, Vt) = scale · (softmax − one-hot of the target).
  virtual void ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& row_max,
                           const Tensor& sum_exp, std::int64_t vocab_start, double scale,
                           Tensor& dlogits) = 0;

  // --- optimizer: fp32 master, grad, moments ----------------------------------
  virtual void adamw_step(Tensor& master, const Tensor& grad, Tensor& m, Tensor& v,
                          const AdamWParams& hp) = 0;
  // One step over many tensors (a backend may do it in one launch); weights[i]
  // (may be undefined) receives master[i] in its own dtype. decay[i] replaces
  // hp.weight_decay for tensor i.
  struct AdamWGroup {
    std::vector<Tensor*> masters, m, v, weights;
    std::vector<const Tensor*> grads;
    std::vector<float> decay;
  };
  virtual void adamw_multi(AdamWGroup& group, const AdamWParams& hp);

 private:
  Allocator& alloc_;
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace ptdp
