// The CUDA backend of Ops: weights and activations in bf16 or fp16, gradients,
// statistics and optimizer state in fp32, on one stream of one GPU; GEMMs
// through cuBLASLt, the other ops through ptdp's kernels (kernels.h). The
// fused-operator switch picks fused or unfused bias+GeLU and scale+mask+softmax;
// attention (grouped-query, g = a for multi-head) runs fused (flash: cuDNN's
// SDPA) or unfused (GEMM, softmax, GEMM).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "core/config/plan.h"
#include "core/kernels/cuda/cuda_allocator.h"
#include "core/kernels/ops.h"

namespace ptdp {

namespace cuda {
class Gemm;
class AdamWTableOwner;
class SumSquaresTableOwner;
class TokenUploader;
class PinnedScalar;
class CudnnAttention;
}  // namespace cuda

struct CudaOpsOptions {
  DType compute = DType::bf16;            // bf16 or fp16
  bool fused_ops = true;                  // fused bias+GeLU and scale+mask+softmax
  Attention attention = Attention::flash; // fused (flash) or unfused attention
  double timeout_s = 60;                  // a synchronize that takes longer aborts the run
  bool deterministic = false;             // no floating-point atomics in reductions; deterministic cuDNN backward
};

// The options a plan asks for (precision, fused operators, attention, determinism).
CudaOpsOptions cuda_ops_options(const Plan& plan, double timeout_s);

class CudaOps final : public Ops {
 public:
  // Orders `alloc`'s allocations and frees on this backend's stream while it lives.
  CudaOps(CudaPoolAllocator& alloc, const CudaOpsOptions& options);
  ~CudaOps() override;

  Device device() const override { return Device::cuda; }
  DType compute_dtype() const override { return options_.compute; }
  std::string name() const override;
  cudaStream_t stream() const { return stream_; }

  void zero(Tensor& x) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void upload_f32(const float* host, Tensor& dst) override;
  void download_f32(const Tensor& src, float* host) override;
  void upload_i32(const std::int32_t* host, Tensor& dst) override;
  void cast(const Tensor& src, Tensor& dst) override;
  void init_param(Tensor& value, const ParamInit& how) override;  // on the device (init.cu)
  void synchronize() override;
  bool synchronous() const override { return false; }
  void reset_marks(int count) override;
  void record_mark(int k) override;
  double mark_seconds(int k) override;

  void embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start, Tensor& out) override;
  void embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start, Tensor& dwte) override;
  void position_forward(const Tensor& wpe, Tensor& x) override;
  void position_backward(const Tensor& dx, Tensor& dwpe) override;
  void layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, Tensor& mean,
                         Tensor& rstd) override;
  void layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                          const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) override;
  void linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                       Tensor& dbias) override;
  void linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) override;
  void linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w, Tensor& dpre,
                            Tensor& dw, Tensor& dbias, Tensor& dbias_pre) override;
  void bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) override;
  void bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& gamma,
                               const Tensor& beta, Tensor& sum, Tensor& ln, Tensor& mean, Tensor& rstd) override;
  // GEMM call keys whose cuBLASLt algorithm was chosen by timing candidates.
  std::size_t tuned_gemm_shapes() const;
  std::size_t fallback_runs() const override;
  void bias_add(Tensor& y, const Tensor& bias) override;
  void bias_backward(const Tensor& dy, Tensor& dbias) override;
  void gelu_forward(const Tensor& x, Tensor& y) override;
  void gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) override;
  void add(const Tensor& a, const Tensor& b, Tensor& out) override;
  void scale(Tensor& x, double alpha) override;
  double sum_squares(const Tensor& x) override;
  double sum_squares_multi(const std::vector<const Tensor*>& xs) override;
  void accumulate_sum(const Tensor& x, Tensor& acc) override;
  double read_f64(const Tensor& scalar) override;
  // Grouped-query attention (ops.h): q (b, s, a, d), kv (b, s, g, 2, d), out (b, s, a, d).
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
  void ce_loss(const Tensor& row_max, const Tensor& sum_exp, const Tensor& target_logit, Tensor& loss) override;
  void ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& row_max, const Tensor& sum_exp,
                   std::int64_t vocab_start, double scale, Tensor& dlogits) override;
  void adamw_step(Tensor& master, const Tensor& grad, Tensor& m, Tensor& v, const AdamWParams& hp) override;
  void adamw_multi(AdamWGroup& group, const AdamWParams& hp) override;

 private:
  // Calls f with a value of the compute type (__nv_bfloat16 or __half).
  template <class F> void with_type(F&& f) const {
    if (options_.compute == DType::bf16) f(__nv_bfloat16{});
    else f(__half{});
  }
  void wait_for_stream(const char* what);
  void attention_unfused_forward(const Tensor& q, const Tensor& kv, Tensor& out, Tensor& probs);
  void attention_unfused_backward(const Tensor& dout, const Tensor& q, const Tensor& kv, const Tensor& probs,
                                  Tensor& dq, Tensor& dkv);
  void rope(Tensor& q, Tensor& kv, double theta, bool backward);  // rope_forward and rope_backward
  cuda::CudnnAttention& cudnn_attention();  // made on first use; throws in a build without cuDNN

  CudaOpsOptions options_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<cuda::Gemm> gemm_;
  std::vector<cudaEvent_t> marks_;
  double* device_scalar_ = nullptr;               // sum_squares result
  std::unique_ptr<cuda::AdamWTableOwner> adamw_;  // tables of the last optimizer group
  std::vector<void*> adamw_key_;                  // its tensors, to reuse the tables
  std::unique_ptr<cuda::SumSquaresTableOwner> norm_;  // tables of the last sum_squares_multi
  std::vector<const void*> norm_key_;                 // its tensors and sizes, to reuse the tables
  std::unique_ptr<cuda::PinnedScalar> pinned_;        // read-back target (created at first use)
  std::unique_ptr<cuda::TokenUploader> uploader_;     // upload_i32's staging (created at first use)
  double read_back(const double* device, const char* what);
  std::shared_ptr<cuda::CudnnAttention> cudnn_attention_;  // cuDNN handle on stream_ and its SDPA graphs
};

// "NVIDIA H100 80GB HBM3", driver, runtime, cuBLASLt versions and device count.
struct CudaDeviceInfo {
  std::string name;
  int devices = 0, device = 0;
  std::string driver, runtime, cublaslt;
  std::int64_t memory_bytes = 0;
};
CudaDeviceInfo cuda_device_info();

// Chooses the GPU of this rank (local rank modulo the devices of the node).
int select_cuda_device(int local_rank);
// The memory of the GPU select_cuda_device(local_rank) would choose, without
// choosing it (no context, no allocation); 0 when there is no GPU.
std::int64_t cuda_device_memory_bytes(int local_rank);
// The name of that GPU ("NVIDIA H100 80GB HBM3"), likewise; "" when there is no GPU.
std::string cuda_device_name(int local_rank);

}  // namespace ptdp
