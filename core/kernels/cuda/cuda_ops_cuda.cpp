// CudaOps: memory, timing marks, element-wise ops, layernorm, embedding,
// cross-entropy and the optimizer, dispatched on the compute type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/io/poll_wait.h"
#include "core/kernels/cuda/adamw_table.h"
#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/kernels/cuda/cuda_query.h"
#include "core/kernels/cuda/gemm.h"
#include "core/kernels/cuda/grad_norm.h"
#include "core/kernels/cuda/init.h"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/token_upload.h"

namespace ptdp {

namespace {

void expect(bool ok, const char* op, const std::string& what) {
  if (!ok) throw std::logic_error(std::string("cuda ") + op + ": " + what);
}
float* f32(const Tensor& t) { return t.data<float>(); }
const std::int32_t* ids(const Tensor& t) { return t.data<std::int32_t>(); }
std::int64_t rows(const Tensor& t) { return t.numel() / t.dim(-1); }
template <class T> T* typed(const Tensor& t) { return static_cast<T*>(t.raw()); }

}  // namespace

CudaOpsOptions cuda_ops_options(const Plan& plan, double timeout_s) {
  CudaOpsOptions opt;
  opt.compute = plan.precision == Precision::fp16 ? DType::f16 : DType::bf16;
  opt.fused_ops = plan.fused_ops;
  opt.attention = plan.attention;
  opt.deterministic = plan.deterministic;
  opt.timeout_s = timeout_s;
  return opt;
}

CudaOps::CudaOps(CudaPoolAllocator& alloc, const CudaOpsOptions& options) : Ops(alloc), options_(options) {
  if (options.compute != DType::bf16 && options.compute != DType::f16)
    throw std::invalid_argument("the CUDA backend computes in bf16 or fp16, not " + dtype_name(options.compute));
  PTDP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  alloc.set_stream(stream_);
  gemm_ = std::make_unique<cuda::Gemm>(stream_, 32u << 20, !options.deterministic);  // timed choice varies by run
  PTDP_CUDA_CHECK(cudaMalloc(&device_scalar_, sizeof(double)));
}

CudaOps::~CudaOps() {
  // Bounded like every host wait; a destructor must not throw: report and go on.
  try {
    wait_for_stream("releasing the CUDA backend");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp: %s\n", e.what());
  }
  // Tensors that outlive the backend free on the legacy default stream, not on a destroyed one.
  auto& pool = static_cast<CudaPoolAllocator&>(allocator());
  if (pool.stream() == stream_) pool.set_stream(nullptr);
  adamw_.reset();
  gemm_.reset();
  cudnn_attention_.reset();  // its cuDNN handle is bound to stream_
  for (cudaEvent_t e : marks_) cudaEventDestroy(e);
  cudaFree(device_scalar_);
  cudaStreamDestroy(stream_);
}

std::string CudaOps::name() const {
  return std::string("cuda-") + dtype_name(options_.compute) + (options_.fused_ops ? "" : "-unfused") +
         (options_.attention == Attention::flash ? "-flash" : "-unfused-attention");
}

// Polls the stream with the run's deadline, so that a hung kernel, NCCL
// collective or pipeline transfer (a peer died or stopped answering: the
// compute stream waits on every received message) ends the run instead of
// hanging it. Each "not ready" answer is cleared from the last-error slot.
void CudaOps::wait_for_stream(const char* what) {
  const std::string place = where(this_process()) + ": " + what;
  const bool done = poll_until(options_.timeout_s, [&](long) {
    return query_ready([this] { return cudaStreamQuery(stream_); }, [] { return cudaGetLastError(); },
                       cuda::describe, place);
  });
  if (!done)
    throw std::runtime_error(place + ": device work did not finish within " +
                             std::to_string(static_cast<int>(options_.timeout_s)) +
                             " s (a kernel, an NCCL collective or a pipeline transfer hung: a peer may have "
                             "died or stopped answering)");
}

void CudaOps::synchronize() { wait_for_stream("synchronize"); }

void CudaOps::zero(Tensor& x) { PTDP_CUDA_CHECK(cudaMemsetAsync(x.raw(), 0, x.bytes(), stream_)); }

void CudaOps::copy(const Tensor& src, Tensor& dst) {
  expect(src.bytes() == dst.bytes() && src.dtype() == dst.dtype(), "copy", "size or type differs");
  PTDP_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), src.raw(), src.bytes(), cudaMemcpyDeviceToDevice, stream_));
}

void CudaOps::upload_f32(const float* host, Tensor& dst) {
  if (dst.dtype() == DType::f32) {
    PTDP_CUDA_CHECK(cudaMemcpyAsync(dst.raw(), host, dst.bytes(), cudaMemcpyHostToDevice, stream_));
    wait_for_stream("upload");
    return;
  }
  Tensor staged = empty(dst.shape(), DType::f32);
  PTDP_CUDA_CHECK(cudaMemcpyAsync(staged.raw(), host, staged.bytes(), cudaMemcpyHostToDevice, stream_));
  cast(staged, dst);
  wait_for_stream("upload");
}

void CudaOps::download_f32(const Tensor& src, float* host) {
  Tensor staged = src;
  if (src.dtype() != DType::f32) {
    staged = empty(src.shape(), DType::f32);
    cast(src, staged);
  }
  PTDP_CUDA_CHECK(cudaMemcpyAsync(host, staged.raw(), staged.bytes(), cudaMemcpyDeviceToHost, stream_));
  wait_for_stream("download");
}

// Staged in pinned memory and copied on the uploader's stream: no stream drain.
void CudaOps::upload_i32(const std::int32_t* host, Tensor& dst) {
  expect(dst.dtype() == DType::i32, "upload_i32", "expects an i32 tensor");
  if (!uploader_) uploader_ = std::make_unique<cuda::TokenUploader>(stream_, options_.timeout_s);
  uploader_->upload(host, dst.data<std::int32_t>(), dst.numel());
}

void CudaOps::cast(const Tensor& src, Tensor& dst) {
  expect(src.numel() == dst.numel(), "cast", "sizes differ");
  if (src.dtype() == dst.dtype()) return copy(src, dst);
  with_type([&](auto tag) {
    using T = decltype(tag);
    if (src.dtype() == DType::f32) cuda::cast_from_float(f32(src), src.numel(), typed<T>(dst), stream_);
    else cuda::cast_to_float(typed<T>(src), src.numel(), f32(dst), stream_);
  });
}

void CudaOps::init_param(Tensor& value, const ParamInit& how) {
  if (value.dtype() == DType::f32) return cuda::init_param(how, value.numel(), f32(value), stream_);
  expect(value.dtype() == options_.compute, "init_param", "value is neither fp32 nor the compute type");
  with_type([&](auto tag) { cuda::init_param(how, value.numel(), typed<decltype(tag)>(value), stream_); });
}

void CudaOps::reset_marks(int count) {
  while (static_cast<int>(marks_.size()) < count) {
    cudaEvent_t e = nullptr;
    PTDP_CUDA_CHECK(cudaEventCreate(&e));
    marks_.push_back(e);
  }
}

void CudaOps::record_mark(int k) { PTDP_CUDA_CHECK(cudaEventRecord(marks_.at(static_cast<std::size_t>(k)), stream_)); }

double CudaOps::mark_seconds(int k) {
  float ms = 0;
  PTDP_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_.at(0), marks_.at(static_cast<std::size_t>(k))));
  return ms * 1e-3;
}

void CudaOps::embedding_forward(const Tensor& tokens, const Tensor& wte, std::int64_t vocab_start, Tensor& out) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::embedding_forward(ids(tokens), tokens.numel(), typed<T>(wte), vocab_start, wte.dim(0), wte.dim(1),
                            typed<T>(out), stream_);
  });
}

void CudaOps::embedding_backward(const Tensor& tokens, const Tensor& dout, std::int64_t vocab_start, Tensor& dwte) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    const auto backward = options_.deterministic ? cuda::embedding_backward_deterministic<T>
                                                 : cuda::embedding_backward<T>;
    backward(ids(tokens), tokens.numel(), typed<T>(dout), vocab_start, dwte.dim(0), dwte.dim(1), f32(dwte), stream_);
  });
}

void CudaOps::position_forward(const Tensor& wpe, Tensor& x) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::position_forward(typed<T>(wpe), x.dim(0), x.dim(1), x.dim(2), typed<T>(x), stream_);
  });
}

void CudaOps::position_backward(const Tensor& dx, Tensor& dwpe) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::position_backward(typed<T>(dx), dx.dim(0), dx.dim(1), dx.dim(2), f32(dwpe), stream_);
  });
}

void CudaOps::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y, Tensor& mean,
                                Tensor& rstd) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::layernorm_forward(typed<T>(x), typed<T>(gamma), typed<T>(beta), rows(x), x.dim(-1),
                            static_cast<float>(kLayerNormEps), typed<T>(y), f32(mean), f32(rstd), stream_);
  });
}

// One kernel for the residual add and the layernorm after it when fused_ops
// (bitwise the separate kernels' results, see layernorm.cu); else the default
// composition of the separate ops.
void CudaOps::bias_residual_layernorm(const Tensor& y, const Tensor& bias, const Tensor& residual, const Tensor& gamma,
                                      const Tensor& beta, Tensor& sum, Tensor& ln, Tensor& mean, Tensor& rstd) {
  if (!options_.fused_ops) return Ops::bias_residual_layernorm(y, bias, residual, gamma, beta, sum, ln, mean, rstd);
  const std::int64_t h = y.dim(-1), n = rows(y);
  expect(residual.numel() == y.numel() && sum.numel() == y.numel() && ln.numel() == y.numel() &&
             bias.numel() == h && gamma.numel() == h && beta.numel() == h && mean.numel() == n && rstd.numel() == n,
         "bias_residual_layernorm", "sizes differ");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::bias_residual_layernorm(typed<T>(y), typed<T>(bias), typed<T>(residual), typed<T>(gamma), typed<T>(beta), n,
                                  h, static_cast<float>(kLayerNormEps), typed<T>(sum), typed<T>(ln), f32(mean),
                                  f32(rstd), stream_);
  });
}

void CudaOps::layernorm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::layernorm_backward(typed<T>(dy), typed<T>(x), typed<T>(gamma), f32(mean), f32(rstd), rows(x), x.dim(-1),
                             typed<T>(dx), f32(dgamma), f32(dbeta), stream_);
  });
}

void CudaOps::bias_add(Tensor& y, const Tensor& bias) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::bias_add(typed<T>(y), typed<T>(bias), rows(y), y.dim(-1), stream_);
  });
}

void CudaOps::bias_backward(const Tensor& dy, Tensor& dbias) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::bias_backward(typed<T>(dy), rows(dy), dy.dim(-1), f32(dbias), stream_);
  });
}

void CudaOps::gelu_forward(const Tensor& x, Tensor& y) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::gelu_forward(typed<T>(x), x.numel(), typed<T>(y), stream_);
  });
}

void CudaOps::gelu_backward(const Tensor& dy, const Tensor& x, Tensor& dx) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::gelu_backward(typed<T>(dy), typed<T>(x), x.numel(), typed<T>(dx), stream_);
  });
}

void CudaOps::add(const Tensor& a, const Tensor& b, Tensor& out) {
  expect(a.numel() == b.numel() && a.numel() == out.numel(), "add", "sizes differ");
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::add(typed<T>(a), typed<T>(b), a.numel(), typed<T>(out), stream_);
  });
}

void CudaOps::scale(Tensor& x, double alpha) {
  if (x.dtype() == DType::f32) return cuda::scale(f32(x), x.numel(), static_cast<float>(alpha), stream_);
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::scale(typed<T>(x), x.numel(), static_cast<float>(alpha), stream_);
  });
}

double CudaOps::sum_squares(const Tensor& x) {
  expect(x.dtype() == DType::f32, "sum_squares", "expects fp32 (gradients)");
  cuda::sum_squares(f32(x), x.numel(), device_scalar_, stream_);
  double host = 0;
  PTDP_CUDA_CHECK(cudaMemcpyAsync(&host, device_scalar_, sizeof host, cudaMemcpyDeviceToHost, stream_));
  wait_for_stream("sum of squares");
  return host;
}

// One device value copied to pinned memory, one wait.
double CudaOps::read_back(const double* device, const char* what) {
  if (!pinned_) pinned_ = std::make_unique<cuda::PinnedScalar>();
  PTDP_CUDA_CHECK(cudaMemcpyAsync(pinned_->get(), device, sizeof(double), cudaMemcpyDeviceToHost, stream_));
  wait_for_stream(what);
  return *pinned_->get();
}

// One launch over every tensor; the device tables are rebuilt only when the list changes.
double CudaOps::sum_squares_multi(const std::vector<const Tensor*>& xs) {
  std::vector<const void*> key;
  std::vector<std::pair<const float*, std::int64_t>> segments;
  for (const Tensor* x : xs) {
    expect(x->dtype() == DType::f32, "sum_squares_multi", "expects fp32 (gradients)");
    segments.emplace_back(f32(*x), x->numel());
    key.insert(key.end(), {x->raw(), reinterpret_cast<const void*>(static_cast<std::intptr_t>(x->numel()))});
  }
  if (!norm_ || key != norm_key_) {
    norm_ = std::make_unique<cuda::SumSquaresTableOwner>(segments, stream_);
    norm_key_ = key;
  }
  cuda::sum_squares_multi(norm_->table(), device_scalar_, stream_);
  return read_back(device_scalar_, "gradient norm");
}

void CudaOps::accumulate_sum(const Tensor& x, Tensor& acc) {
  expect(x.dtype() == DType::f32, "accumulate_sum", "expects fp32 values");
  expect(acc.dtype() == DType::f64 && acc.numel() == 1, "accumulate_sum", "expects a 1-element f64 accumulator");
  cuda::accumulate_sum(f32(x), x.numel(), acc.data<double>(), stream_);
}

double CudaOps::read_f64(const Tensor& scalar) {
  expect(scalar.dtype() == DType::f64 && scalar.numel() == 1, "read_f64", "expects a 1-element f64 tensor");
  return read_back(scalar.data<double>(), "read-back");
}

void CudaOps::ce_row_max(const Tensor& logits, Tensor& row_max) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::ce_row_max(typed<T>(logits), rows(logits), logits.dim(-1), f32(row_max), stream_);
  });
}

void CudaOps::ce_row_sum_exp(const Tensor& logits, const Tensor& row_max, Tensor& sum_exp) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::ce_row_sum_exp(typed<T>(logits), rows(logits), logits.dim(-1), f32(row_max), f32(sum_exp), stream_);
  });
}

void CudaOps::ce_target_logit(const Tensor& logits, const Tensor& targets, std::int64_t vocab_start,
                              Tensor& target_logit) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::ce_target_logit(typed<T>(logits), ids(targets), rows(logits), logits.dim(-1), vocab_start, f32(target_logit),
                          stream_);
  });
}

void CudaOps::ce_loss(const Tensor& row_max, const Tensor& sum_exp, const Tensor& target_logit, Tensor& loss) {
  cuda::ce_loss(f32(row_max), f32(sum_exp), f32(target_logit), row_max.numel(), f32(loss), stream_);
}

void CudaOps::ce_backward(const Tensor& logits, const Tensor& targets, const Tensor& row_max, const Tensor& sum_exp,
                          std::int64_t vocab_start, double scale, Tensor& dlogits) {
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::ce_backward(typed<T>(logits), ids(targets), f32(row_max), f32(sum_exp), rows(logits), logits.dim(-1),
                      vocab_start, static_cast<float>(scale), typed<T>(dlogits), stream_);
  });
}

void CudaOps::adamw_step(Tensor& master, const Tensor& grad, Tensor& m, Tensor& v, const AdamWParams& hp) {
  AdamWGroup g{{&master}, {&m}, {&v}, {nullptr}, {&grad}, {hp.weight_decay}};
  adamw_multi(g, hp);
}

// One launch over every tensor; the device tables are rebuilt only when the group changes.
void CudaOps::adamw_multi(AdamWGroup& g, const AdamWParams& hp) {
  std::vector<void*> key;
  std::vector<cuda::AdamWTensor> tensors;
  for (std::size_t i = 0; i < g.masters.size(); ++i) {
    void* weight = g.weights[i] != nullptr ? g.weights[i]->raw() : nullptr;
    tensors.push_back({f32(*g.masters[i]), f32(*g.grads[i]), f32(*g.m[i]), f32(*g.v[i]), weight,
                       g.masters[i]->numel(), g.decay[i]});
    key.insert(key.end(), {g.masters[i]->raw(), weight});
  }
  if (!adamw_ || key != adamw_key_) {
    adamw_ = std::make_unique<cuda::AdamWTableOwner>(tensors, stream_);
    adamw_key_ = key;
  }
  with_type([&](auto tag) {
    using T = decltype(tag);
    cuda::adamw_multi_tensor<T>(adamw_->table(), hp.lr, hp.beta1, hp.beta2, hp.eps, hp.step, stream_);
  });
}

}  // namespace ptdp
