// The residual add of a row-parallel layer fused with its bias (see kernels.h):
// out = y + bias + residual in fp32 with one rounding, where the unfused path
// rounds twice (bias_add, then add) and reads and writes the activations twice.
// 128-bit loads and stores when y, residual and out are 16-byte aligned, a
// scalar tail for the last n mod 8 elements; grid-stride over any size.
// Also the fp32 accumulation of an epilogue's bias gradient.
// Letters: rows × h elements (h the hidden size).
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct FusedResidualConfig {
  static constexpr int kThreads = 256;
  static constexpr int kMaxBlocks = 4096;  // grid-stride beyond, enough to fill an H100 several times
};
using Cfg = FusedResidualConfig;

// 16 bytes of T: one 128-bit load or store.
template <class T> struct alignas(16) Pack {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

__device__ inline std::int64_t global_thread() { return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

template <class T> __device__ inline T sum3(T y, T bias, T residual) {
  return from_float<T>(to_float(y) + to_float(bias) + to_float(residual));
}

// Elements [begin, n) one at a time (the unaligned case, or the tail).
template <class T>
__global__ void bias_residual_scalar_kernel(const T* y, const T* bias, const T* residual, std::int64_t begin,
                                            std::int64_t n, std::int64_t h, T* out) {
  for (std::int64_t i = begin + global_thread(); i < n; i += grid_threads()) out[i] = sum3(y[i], bias[i % h], residual[i]);
}

// Packs [0, packs) of Pack<T>::kSize elements; each thread reads its whole pack
// of y and residual before writing out, so out may alias either.
template <class T>
__global__ void bias_residual_vector_kernel(const T* y, const T* bias, const T* residual, std::int64_t packs,
                                            std::int64_t h, T* out) {
  constexpr int kSize = Pack<T>::kSize;
  for (std::int64_t p = global_thread(); p < packs; p += grid_threads()) {
    const Pack<T> a = reinterpret_cast<const Pack<T>*>(y)[p], r = reinterpret_cast<const Pack<T>*>(residual)[p];
    Pack<T> o;
    std::int64_t col = (p * kSize) % h;
    for (int j = 0; j < kSize; ++j) {
      o.v[j] = sum3(a.v[j], bias[col], r.v[j]);
      if (++col == h) col = 0;
    }
    reinterpret_cast<Pack<T>*>(out)[p] = o;
  }
}

template <class T> __global__ void accumulate_f32_kernel(const T* partial, std::int64_t n, float* acc) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) acc[i] += to_float(partial[i]);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

template <class T>
void bias_residual_add(const T* y, const T* bias, const T* residual, std::int64_t rows, std::int64_t h, T* out,
                       cudaStream_t st) {
  const std::int64_t n = rows * h;
  if (n <= 0) return;
  std::int64_t done = 0;
  if (aligned16(y) && aligned16(residual) && aligned16(out)) {
    const std::int64_t packs = n / Pack<T>::kSize;
    if (packs > 0) {
      bias_residual_vector_kernel<<<dev::grid_blocks(packs, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
          y, bias, residual, packs, h, out);
      PTDP_CUDA_CHECK_LAUNCH();
    }
    done = packs * Pack<T>::kSize;
  }
  if (done < n) {
    bias_residual_scalar_kernel<<<dev::grid_blocks(n - done, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
        y, bias, residual, done, n, h, out);
    PTDP_CUDA_CHECK_LAUNCH();
  }
}

template <class T> void accumulate_f32(const T* partial, std::int64_t n, float* acc, cudaStream_t st) {
  if (n <= 0) return;
  accumulate_f32_kernel<<<dev::grid_blocks(n, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(partial, n, acc);
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                  \
  template void bias_residual_add<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, T*, cudaStream_t); \
  template void accumulate_f32<T>(const T*, std::int64_t, float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE
template void accumulate_f32<float>(const float*, std::int64_t, float*, cudaStream_t);

}  // namespace ptdp::cuda
