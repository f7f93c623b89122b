// CudaOps: linear layers through cuBLASLt and the fused-operator switch
// (options_.fused_ops) for them. Letters: n tokens, k in, m out, f the MLP's
// inner size.
//   fused:   bias in the GEMM epilogue; fc1's bias+GeLU in its GEMM
//            (GELU_AUX_BIAS, the pre-activation kept as the aux output); fc2's
//            data-gradient GEMM applies the GeLU gradient and sums fc1's bias
//            gradient (DGELU_BGRAD; see dgelu_plans for the bias gradient's
//            type); weight-gradient GEMMs sum the bias gradient (BGRADB);
//            bias+residual in one kernel.
//   unfused: GEMMs without epilogues; bias add, GeLU, GeLU gradient, bias
//            gradient and residual add as separate kernels, each reading and
//            writing memory (Ops' default compositions).
// An epilogue cuBLASLt cannot run at a shape (types, alignments, the GeLU aux
// leading dimension) falls back to the unfused composition, said once per
// shape on stderr and counted (fallback_runs: the kernel benchmark's
// unfused_fallback counter).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/gemm.h"
#include "core/kernels/cuda/kernels.h"

namespace ptdp {

namespace {

std::int64_t rows(const Tensor& t) { return t.numel() / t.dim(-1); }
template <class T> T* typed(const Tensor& t) { return static_cast<T*>(t.raw()); }
template <class T> cuda::ElemType elem() {
  return std::is_same_v<T, __nv_bfloat16> ? cuda::ElemType::bf16 : cuda::ElemType::f16;
}

// y (n, m) = x (n, k) · w (m, k)ᵀ, no epilogue yet.
template <class T> cuda::GemmArgs forward_args(const Tensor& x, const Tensor& w, const Tensor& y) {
  cuda::GemmArgs g;
  g.trans_b = true, g.m = rows(x), g.n = w.dim(0), g.k = w.dim(1);
  g.a = x.raw(), g.lda = g.k, g.b = w.raw(), g.ldb = g.k, g.c = y.raw(), g.ldc = g.n;
  g.ab = g.c_type = elem<T>();
  return g;
}

// dx (n, k) = dy (n, m) · w (m, k), no epilogue yet.
template <class T> cuda::GemmArgs data_grad_args(const Tensor& dy, const Tensor& w, const Tensor& dx) {
  cuda::GemmArgs g;
  g.m = rows(dy), g.n = w.dim(1), g.k = w.dim(0);
  g.a = dy.raw(), g.lda = g.k, g.b = w.raw(), g.ldb = g.n, g.c = dx.raw(), g.ldc = g.n;
  g.ab = g.c_type = elem<T>();
  return g;
}

// dw (m, k) += dyᵀ (m, n) · x (n, k), accumulated in fp32, no epilogue yet.
template <class T> cuda::GemmArgs weight_grad_args(const Tensor& dy, const Tensor& x, const Tensor& dw) {
  cuda::GemmArgs g;
  g.trans_a = true, g.m = dw.dim(0), g.n = dw.dim(1), g.k = rows(x);
  g.a = dy.raw(), g.lda = g.m, g.b = x.raw(), g.ldb = g.n, g.c = dw.raw(), g.ldc = g.n;
  g.ab = elem<T>(), g.c_type = cuda::ElemType::f32, g.beta = 1;
  return g;
}

}  // namespace

std::size_t CudaOps::tuned_gemm_shapes() const { return gemm_->tuned_shapes(); }
std::size_t CudaOps::fallback_runs() const { return gemm_->fallback_runs(); }

void CudaOps::linear_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::GemmArgs g = forward_args<T>(x, w, y);
    if (cuda::forward_epilogue(options_.fused_ops, bias.defined(), false, false) == cuda::Epilogue::bias) {
      g.epilogue = cuda::Epilogue::bias, g.bias = bias.raw();
      if (gemm_->try_run(g)) return;
      g.epilogue = cuda::Epilogue::none, g.bias = nullptr;
    }
    gemm_->run(g);
    if (bias.defined()) bias_add(y, bias);
  });
}

void CudaOps::linear_backward(const Tensor& dy, const Tensor& x, const Tensor& w, Tensor& dx, Tensor& dw,
                              Tensor& dbias) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    if (dx.defined()) gemm_->run(data_grad_args<T>(dy, w, dx));
    if (!dw.defined()) {  // zero-bubble B: the weight gradient is W's
      if (dbias.defined()) bias_backward(dy, dbias);
      return;
    }
    cuda::GemmArgs g = weight_grad_args<T>(dy, x, dw);
    if (cuda::weight_grad_epilogue(options_.fused_ops, dbias.defined()) == cuda::Epilogue::bias_grad_from_a) {
      // BGRADB overwrites its (fp32, D's type) output: sum into scratch, then add.
      Tensor partial = empty({dw.dim(0)}, DType::f32);
      g.epilogue = cuda::Epilogue::bias_grad_from_a, g.bias_grad = partial.raw();
      if (gemm_->try_run(g)) {
        cuda::accumulate_f32(partial.data<float>(), dw.dim(0), dbias.data<float>(), stream_);
        return;
      }
      g.epilogue = cuda::Epilogue::none, g.bias_grad = nullptr;
    }
    gemm_->run(g);
    if (dbias.defined()) bias_backward(dy, dbias);
  });
}

void CudaOps::linear_gelu_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pre, Tensor& y) {
  bool done = false;
  with_type([&](auto tag) {
    using T = decltype(tag);
    const bool aux_ok = cuda::gelu_aux_ok(pre.raw(), pre.dim(-1), elem<T>());
    if (cuda::forward_epilogue(options_.fused_ops, bias.defined(), true, aux_ok) != cuda::Epilogue::gelu_aux_bias)
      return;
    cuda::GemmArgs g = forward_args<T>(x, w, y);  // y = gelu(pre), pre = x·wᵀ + bias as the aux output
    g.epilogue = cuda::Epilogue::gelu_aux_bias, g.bias = bias.raw(), g.aux = pre.raw(), g.ld_aux = pre.dim(-1);
    done = gemm_->try_run(g);
  });
  // Unfused, or no fused algorithm: GEMM (with the bias epilogue when fused), then the GeLU kernel.
  if (!done) Ops::linear_gelu_forward(x, w, bias, pre, y);
}

void CudaOps::linear_gelu_backward(const Tensor& dy, const Tensor& gelu_out, const Tensor& pre, const Tensor& w,
                                   Tensor& dpre, Tensor& dw, Tensor& dbias, Tensor& dbias_pre) {
  bool done = false;
  with_type([&](auto tag) {
    using T = decltype(tag);
    const std::int64_t f = pre.dim(-1);
    const bool aux_ok = cuda::gelu_aux_ok(pre.raw(), f, elem<T>()) && dpre.dim(-1) == f;
    for (const cuda::DgeluPlan& plan : cuda::dgelu_plans(options_.fused_ops, aux_ok, elem<T>())) {
      // dpre (n, f) = (dy · w) ∘ gelu'(pre), and with BGRAD fc1's bias gradient,
      // which the epilogue overwrites: into scratch, then added to the fp32 gradient.
      cuda::GemmArgs g = data_grad_args<T>(dy, w, dpre);
      g.epilogue = plan.epilogue, g.aux = pre.raw(), g.ld_aux = f;
      const bool f32 = plan.bias_grad_type == cuda::ElemType::f32;
      Tensor partial;
      if (plan.epilogue == cuda::Epilogue::dgelu_bgrad) {
        partial = f32 ? empty({f}, DType::f32) : empty({f});
        g.bias_grad = partial.raw(), g.bias_grad_type = plan.bias_grad_type;
      }
      if (!gemm_->try_run(g)) continue;
      done = true;
      if (!dbias_pre.defined()) return;
      if (!partial.defined()) bias_backward(dpre, dbias_pre);  // DGELU alone: the bias gradient by its kernel
      else if (f32) cuda::accumulate_f32(partial.data<float>(), f, dbias_pre.data<float>(), stream_);
      else cuda::accumulate_f32(typed<T>(partial), f, dbias_pre.data<float>(), stream_);
      return;
    }
  });
  if (!done) return Ops::linear_gelu_backward(dy, gelu_out, pre, w, dpre, dw, dbias, dbias_pre);
  Tensor no_dx;
  linear_backward(dy, gelu_out, w, no_dx, dw, dbias);
}

void CudaOps::bias_residual_add(const Tensor& y, const Tensor& bias, const Tensor& residual, Tensor& out) {
  if (!options_.fused_ops) return Ops::bias_residual_add(y, bias, residual, out);
  if (y.numel() != residual.numel() || y.numel() != out.numel() || bias.numel() != y.dim(-1))
    throw std::logic_error("cuda bias_residual_add: sizes differ");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::bias_residual_add(typed<T>(y), typed<T>(bias), typed<T>(residual), rows(y), y.dim(-1), typed<T>(out), stream_);
  });
}

}  // namespace ptdp
