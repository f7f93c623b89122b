// An Ops that runs every call on another backend and records each compute call
// a decoder layer makes: its kind and sizes (op_kind.h) and a way to run it
// again on the same tensors. A test holds a layer's records (layer_ops.h)
// against these calls, and the kernel benchmarks time each call so. A compute
// call that has no kind is refused (std::logic_error): a layer that starts
// calling one needs its kind first. Memory calls (empty, zero, copy, uploads)
// are passed on unrecorded.
#pragma once
#include <functional>
#include <vector>

#include "core/kernels/ops.h"
#include "core/layer_ops/op_kind.h"

namespace ptdp {

// A recorded call, or a part of one, to run again on the same tensors, and their
// bytes, each once: what it reads or writes at least.
struct RecordedRun {
  std::function<void()> again;
  double bytes = 0;
};

class RecordingOps final : public Ops {
 public:
  using Run = RecordedRun;
  struct Call {
    OpKind kind;
    std::vector<std::int64_t> sizes;  // named by kind_traits(kind).sizes
    Run whole;
    Run gemm, elementwise;  // a fused call's (linear_gelu_*) GEMM and element-wise work alone; empty otherwise
  };

  explicit RecordingOps(Ops& inner) : Ops(inner.allocator()), inner_(inner) {}
  // The calls recorded since the last take, in order.
  std::vector<Call> take_calls();

  Device device() const override { return inner_.device(); }
  DType compute_dtype() const override { return inner_.compute_dtype(); }
  std::string name() const override { return inner_.name(); }
  void zero(Tensor& x) override { inner_.zero(x); }
  void copy(const Tensor& src, Tensor& dst) override { inner_.copy(src, dst); }
  void upload_f32(const float* host, Tensor& dst) override { inner_.upload_f32(host, dst); }
  void download_f32(const Tensor& src, float* host) override { inner_.download_f32(src, host); }
  void upload_i32(const std::int32_t* host, Tensor& dst) override { inner_.upload_i32(host, dst); }
  void cast(const Tensor& src, Tensor& dst) override { inner_.cast(src, dst); }
  void init_param(Tensor& value, const ParamInit& how) override { inner_.init_param(value, how); }
  void synchronize() override { inner_.synchronize(); }
  bool synchronous() const override { return inner_.synchronous(); }
  std::size_t fallback_runs() const override { return inner_.fallback_runs(); }
  void reset_marks(int count) override { inner_.reset_marks(count); }
  void record_mark(int k) override { inner_.record_mark(k); }
  double mark_seconds(int k) override { return inner_.mark_seconds(k); }

  // The layer's calls, recorded.
  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, Tensor& mean,
                         Tensor& rstd) override;
  void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                          const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) override;
  void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                       Tensor& dbias) override;
  void bias_backward(const Tensor& dy, Tensor& dbias) override;
  void linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) override;
  void linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                            Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre) override;
  void add(const Tensor& a, const Tensor& b, Tensor& out) override;
  void bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) override;
  void bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& gamma,
                               const Tensor& beta, Tensor& sum, Tensor& ln, Tensor& mean, Tensor& rstd) override;
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

  void gelu_forward(const Tensor& x, Tensor& y) override;
  void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) override;
  void embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start, Tensor& out) override;
  void embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start, Tensor& dwte) override;

  // Compute calls that have no kind: refused.
  void position_forward(const Tensor&, Tensor&) override { refuse("position_forward"); }
  void position_backward(const Tensor&, Tensor&) override { refuse("position_backward"); }
  void bias_add(Tensor&, const Tensor&) override { refuse("bias_add"); }
  void scale(Tensor&, double) override { refuse("scale"); }
  double sum_squares(const Tensor&) override { refuse("sum_squares"); }
  void ce_row_max(const Tensor&, Tensor&) override { refuse("ce_row_max"); }
  void ce_row_sum_exp(const Tensor&, const Tensor&, Tensor&) override { refuse("ce_row_sum_exp"); }
  void ce_target_logit(const Tensor&, const Tensor&, std::int64_t, Tensor&) override { refuse("ce_target_logit"); }
  void ce_loss(const Tensor&, const Tensor&, const Tensor&, Tensor&) override { refuse("ce_loss"); }
  void ce_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, std::int64_t, double, Tensor&) override {
    refuse("ce_backward");
  }
  void adamw_step(Tensor&, const Tensor&, Tensor&, Tensor&, const AdamWParams&) override { refuse("adamw_step"); }

 private:
  void record(OpKind kind, std::vector<std::int64_t> sizes, Run whole, Run gemm = {}, Run elementwise = {});
  [[noreturn]] static void refuse(const char* call);

  Ops& inner_;
  std::vector<Call> calls_;
};

}  // namespace ptdp
