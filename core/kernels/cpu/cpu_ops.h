// The CPU backend of Ops: fp32 tensors in host memory, the reference kernels.
#pragma once
#include "core/kernels/ops.h"

namespace ptdp {

class CpuOps final : public Ops {
 public:
  explicit CpuOps(Allocator& alloc) : Ops(alloc) {}
  Device device() const override { return Device::cpu; }
  DType compute_dtype() const override { return DType::f32; }
  std::string name() const override { return "cpu-fp32"; }

  void zero(Tensor& x) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void upload_f32(const float* host, Tensor& dst) override;
  void download_f32(const Tensor& src, float* host) override;
  void upload_i32(const std::int32_t* host, Tensor& dst) override;
  void cast(const Tensor& src, Tensor& dst) override;

  void embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start,
                         Tensor& out) override;
  void embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start,
                          Tensor& dwte) override;
  void position_forward(const Tensor& wpe, Tensor& x) override;
  void position_backward(const Tensor& dx, Tensor& dwpe) override;
  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                         Tensor& mean, Tensor& rstd) override;
  void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                          const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) override;
  void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                       Tensor& dbias) override;
  void bias_add(Tensor& y, const Tensor& bias) override;
  void bias_backward(const Tensor& dy, Tensor& dbias) override;
  void gelu_forward(const Tensor& x, Tensor& y) override;
  void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) override;
  void add(const Tensor& a, const Tensor& b, Tensor& out) override;
  void scale(Tensor& x, double alpha) override;
  double sum_squares(const Tensor& x) override;
  Tensor attention_forward(const Tensor& q, const Tensor& kv, Tensor& out) override;
  void attention_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& out,
                          const Tensor& saved, Tensor& dq, Tensor& dkv) override;
  void rmsnorm_forward(const Tensor& x, const Tensor& gamma, Tensor& y, Tensor& rstd) override;
  void rmsnorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                        Tensor& dgamma) override;
  void swiglu_forward(const Tensor& pre, Tensor& y) override;
  void swiglu_backward(const Tensor& dy, const Tensor& pre, Tensor& dpre) override;
  void rope_forward(Tensor& q, Tensor& kv, double theta) override;
  void rope_backward(Tensor& dq, Tensor& dkv, double theta) override;
  void ce_row_max(const Tensor& logits, Tensor& row_max) override;
  void ce_row_sum_exp(const Tensor& logits, const Tensor& row_max, Tensor& sum_exp) override;
  void ce_target_logit(const Tensor& logits, const Tensor& targets, std::int64_t vocab_start,
                       Tensor& target_logit) override;
  void ce_loss(const Tensor& row_max, const Tensor& sum_exp, const Tensor& target_logit,
               Tensor& loss) override;
  void ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& row_max,
                   const Tensor& sum_exp, std::int64_t vocab_start, double scale,
                   Tensor& dlogits) override;
  void adamw_step(Tensor& master, const Tensor& grad, Tensor& m, Tensor& v,
                  const AdamWParams& hp) override;
};

}  // namespace ptdp
