// 128-bit vector loads and stores of the memory-bound kernels: W elements of T
// per access, converted to and from fp32 registers, and a grid-stride loop that
// visits W-element chunks and then the scalar tail. W = 1 is the scalar path
// (unaligned views, odd lengths); the launcher picks W with vector_plan.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda::vec {

// W elements of T as one aligned access (16 bytes when W·sizeof(T) = 16).
template <class T, int W> struct alignas(sizeof(T) * W) Vec {
  T v[W];
};

// x[k] = p[k] for k < W, as one access; p aligned to W·sizeof(T).
template <int W, class T> __device__ inline void load(const T* p, float (&x)[W]) {
  const Vec<T, W> raw = *reinterpret_cast<const Vec<T, W>*>(p);
#pragma unroll
  for (int k = 0; k < W; ++k) x[k] = dev::to_float(raw.v[k]);
}

// p[k] = x[k] rounded to T for k < W, as one access; p aligned to W·sizeof(T).
template <int W, class T> __device__ inline void store(T* p, const float (&x)[W]) {
  Vec<T, W> raw;
#pragma unroll
  for (int k = 0; k < W; ++k) raw.v[k] = dev::from_float<T>(x[k]);
  *reinterpret_cast<Vec<T, W>*>(p) = raw;
}

template <int W> using Width = std::integral_constant<int, W>;

// Grid-stride over [0, n): f(i, Width<W>{}) for every chunk start i = 0, W, 2W,
// ... below n − n mod W, then f(i, Width<1>{}) for each element of the tail.
// f loads and stores with the width it is given.
template <int W, class F> __device__ inline void for_each_chunk(std::int64_t n, F&& f) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t chunks = n / W;
  for (std::int64_t c = first; c < chunks; c += stride) f(c * W, Width<W>{});
  if constexpr (W > 1)
    for (std::int64_t i = chunks * W + first; i < n; i += stride) f(i, Width<1>{});
}

// Block-stride over one row of length h (a multiple of W): f(j, Width<W>{})
// for chunk starts j = W·threadIdx.x, W·(threadIdx.x + blockDim.x), ...
template <int W, class F> __device__ inline void for_each_row_chunk(std::int64_t h, F&& f) {
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * W;
  for (std::int64_t j = static_cast<std::int64_t>(threadIdx.x) * W; j < h; j += stride) f(j, Width<W>{});
}

// Host: f(Width<W>{}) when the launch may use `width` = W, else f(Width<1>{}),
// so each kernel is compiled at the vector width and the scalar one.
template <int W, class F> inline void dispatch_width(int width, F&& f) {
  if (width == W)
    f(Width<W>{});
  else
    f(Width<1>{});
}

}  // namespace ptdp::cuda::vec
