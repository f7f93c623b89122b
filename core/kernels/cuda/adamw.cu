// Multi-tensor AdamW, CUDA (see kernels.h and core/kernels/cpu/adamw.h): one
// launch over every (tensor, chunk of ≤ kChunk elements) of an AdamWTable, and
// the host builder of that table (adamw_table.h).
// Per element: fp32 master p, grad g, moments m, v; weight (T) = p rounded.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/kernels/cuda/adamw_table.h"
#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

struct AdamWConfig {
  static constexpr int kThreads = 512;  // one block per chunk; threads stride over ≤ kChunk elements
};
using Cfg = AdamWConfig;

// Hyper-parameters of one step; bias corrections 1 − β^step precomputed in double.
struct AdamWStep {
  float lr, beta1, beta2, eps, bc1, bc2;
};

// m = β1 m + (1−β1) g;  v = β2 v + (1−β2) g²;
// p −= lr · (m̂ / (sqrt(v̂) + eps) + decay · p), m̂ = m/bc1, v̂ = v/bc2 (as cpu::adamw_step).
template <class T> __global__ void adamw_kernel(AdamWTable table, AdamWStep hp) {
  const int c = blockIdx.x;
  const int i = table.chunk_tensor[c];
  const std::int64_t start = table.chunk_start[c];
  const std::int64_t size = table.sizes[i];
  const std::int64_t end = start + AdamWTable::kChunk < size ? start + AdamWTable::kChunk : size;
  float* p = table.masters[i];
  const float* g = table.grads[i];
  float* m = table.m[i];
  float* v = table.v[i];
  T* w = static_cast<T*>(table.weights[i]);
  const float decay = table.decay[i];
  for (std::int64_t j = start + threadIdx.x; j < end; j += Cfg::kThreads) {
    const float gj = g[j];
    const float mj = hp.beta1 * m[j] + (1.0f - hp.beta1) * gj;
    const float vj = hp.beta2 * v[j] + (1.0f - hp.beta2) * gj * gj;
    const float m_hat = mj / hp.bc1;
    const float v_hat = vj / hp.bc2;
    const float pj = p[j] - hp.lr * (m_hat / (sqrtf(v_hat) + hp.eps) + decay * p[j]);
    m[j] = mj;
    v[j] = vj;
    p[j] = pj;
    if (w != nullptr) w[j] = dev::from_float<T>(pj);
  }
}

}  // namespace

template <class T>
void adamw_multi_tensor(const AdamWTable& table, float lr, float beta1, float beta2, float eps, int step,
                        cudaStream_t st) {
  if (table.chunks <= 0) return;
  const AdamWStep hp{lr,
                     beta1,
                     beta2,
                     eps,
                     static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), step)),
                     static_cast<float>(1.0 - std::pow(static_cast<double>(beta2), step))};
  adamw_kernel<T><<<static_cast<unsigned>(table.chunks), Cfg::kThreads, 0, st>>>(table, hp);
  PTDP_CUDA_CHECK_LAUNCH();
}

template void adamw_multi_tensor<__nv_bfloat16>(const AdamWTable&, float, float, float, float, int, cudaStream_t);
template void adamw_multi_tensor<__half>(const AdamWTable&, float, float, float, float, int, cudaStream_t);

// --- AdamWTableOwner ------------------------------------------------------------------

template <class X> X* AdamWTableOwner::upload(const std::vector<X>& host, cudaStream_t st) {
  if (host.empty()) return nullptr;
  void* dst = nullptr;
  PTDP_CUDA_CHECK(cudaMalloc(&dst, host.size() * sizeof(X)));
  device_.push_back(dst);
  PTDP_CUDA_CHECK(cudaMemcpyAsync(dst, host.data(), host.size() * sizeof(X), cudaMemcpyHostToDevice, st));
  return static_cast<X*>(dst);
}

AdamWTableOwner::AdamWTableOwner(const std::vector<AdamWTensor>& tensors, cudaStream_t st) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const AdamWTensor& t = tensors[i];
    masters_.push_back(t.master);
    grads_.push_back(t.grad);
    m_.push_back(t.m);
    v_.push_back(t.v);
    weights_.push_back(t.weight);
    sizes_.push_back(t.size);
    decay_.push_back(t.decay);
    for (std::int64_t start = 0; start < t.size; start += AdamWTable::kChunk) {
      chunk_tensor_.push_back(static_cast<int>(i));
      chunk_start_.push_back(start);
    }
  }
  constexpr auto kMaxInt = static_cast<std::size_t>(INT32_MAX);
  if (tensors.size() > kMaxInt || chunk_tensor_.size() > kMaxInt)
    throw std::invalid_argument("AdamWTableOwner: more than 2^31 tensors or chunks");
  try {
    table_.tensors = static_cast<int>(tensors.size());
    table_.masters = upload(masters_, st);
    table_.grads = upload(grads_, st);
    table_.m = upload(m_, st);
    table_.v = upload(v_, st);
    table_.weights = upload(weights_, st);
    table_.sizes = upload(sizes_, st);
    table_.decay = upload(decay_, st);
    table_.chunk_tensor = upload(chunk_tensor_, st);
    table_.chunk_start = upload(chunk_start_, st);
    table_.chunks = static_cast<int>(chunk_tensor_.size());
  } catch (...) {
    for (void* p : device_) cudaFree(p);
    throw;
  }
}

// cudaFree waits for the device, so queued launches reading the tables finish
// first. Errors are not thrown from a destructor (a failed free leaks).
AdamWTableOwner::~AdamWTableOwner() {
  for (void* p : device_) cudaFree(p);
}

}  // namespace ptdp::cuda
