// Token and position embedding, CUDA (see kernels.h and core/kernels/cpu/embedding.h):
// vocabulary-parallel lookup (zero rows for tokens outside the shard), its
// scatter-add gradient (fp32 atomics: tokens repeat) and its deterministic
// variant (tokens sorted stably with CUB, each token's rows summed in position
// order), and the learned positions.
// Letters: b micro-batch, s sequence, n = b·s tokens, h hidden, Vt vocabulary
// shard [vocab_start, vocab_start + Vt). wte (Vt, h); wpe (≥s, h); x, out, dout (n, h).
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/reduce.cuh"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct EmbeddingConfig {
  static constexpr int kThreads = 256;         // token kernels: one block per token row, threads over h
  static constexpr int kMaxRowBlocks = 16384;  // grid-stride over rows beyond this
  static constexpr int kMaxBlocks = 4096;      // position kernels and sort keys: 1-D grid-stride
  static constexpr int kVec = 8;               // deterministic backward: 16-bit elements per 128-bit access
};
using Cfg = EmbeddingConfig;

// Row of the shard holding the token, or -1 when the token lies outside it.
__device__ inline std::int64_t shard_row(std::int32_t token, std::int64_t vocab_start, std::int64_t vt) {
  const std::int64_t row = static_cast<std::int64_t>(token) - vocab_start;
  return (row >= 0 && row < vt) ? row : -1;
}

// out (n, h) = wte row of the token, or zeros.
template <class T>
__global__ void embedding_forward_kernel(const std::int32_t* tokens, std::int64_t n, const T* wte,
                                         std::int64_t vocab_start, std::int64_t vt, std::int64_t h, T* out) {
  for (std::int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const std::int64_t row = shard_row(tokens[i], vocab_start, vt);
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads)
      out[i * h + j] = row >= 0 ? wte[row * h + j] : from_float<T>(0.0f);
  }
}

// dwte (Vt, h) += dout (n, h) rows scattered by token; atomics since tokens repeat.
template <class T>
__global__ void embedding_backward_kernel(const std::int32_t* tokens, std::int64_t n, const T* dout,
                                          std::int64_t vocab_start, std::int64_t vt, std::int64_t h, float* dwte) {
  for (std::int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const std::int64_t row = shard_row(tokens[i], vocab_start, vt);
    if (row < 0) continue;  // uniform over the block
    for (std::int64_t j = threadIdx.x; j < h; j += Cfg::kThreads)
      atomicAdd(dwte + row * h + j, to_float(dout[i * h + j]));
  }
}

// keys (n) = shard row of token i, or Vt when outside the shard; positions (n) = i.
__global__ void sort_keys_kernel(const std::int32_t* tokens, std::int64_t n, std::int64_t vocab_start, std::int64_t vt,
                                 std::uint32_t* keys, std::int32_t* positions) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = shard_row(tokens[i], vocab_start, vt);
    keys[i] = static_cast<std::uint32_t>(row >= 0 ? row : vt);
    positions[i] = static_cast<std::int32_t>(i);
  }
}

// keys, positions (n) sorted by key, positions ascending within a key (stable
// sort). The block at the first index i of each run of one in-shard key adds
// Σ of dout rows of the run, in position order, to that dwte row: the same
// additions in the same order on every run.
template <int W, class T>
__global__ void embedding_backward_sorted_kernel(const std::uint32_t* keys, const std::int32_t* positions,
                                                 std::int64_t n, const T* dout, std::int64_t vt, std::int64_t h,
                                                 float* dwte) {
  for (std::int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const std::uint32_t key = keys[i];
    if (key >= vt || (i > 0 && keys[i - 1] == key)) continue;  // uniform over the block
    float* out = dwte + static_cast<std::int64_t>(key) * h;
    vec::for_each_row_chunk<W>(h, [&](std::int64_t j, auto) {
      float acc[W] = {};
      for (std::int64_t p = i; p < n && keys[p] == key; ++p) {
        float v[W];
        vec::load<W>(dout + static_cast<std::int64_t>(positions[p]) * h + j, v);
        for (int k = 0; k < W; ++k) acc[k] += v[k];
      }
      for (int k = 0; k < W; ++k) out[j + k] += acc[k];
    });
  }
}

// x (b, s, h) += wpe (s, h) broadcast over b.
template <class T>
__global__ void position_forward_kernel(const T* wpe, std::int64_t b, std::int64_t sh, T* x) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < b * sh;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    x[i] = from_float<T>(to_float(x[i]) + to_float(wpe[i % sh]));
}

// dwpe (s, h) += Σ over b of dx (b, s, h): one thread per (position, feature), no collisions.
template <class T>
__global__ void position_backward_kernel(const T* dx, std::int64_t b, std::int64_t sh, float* dwpe) {
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < sh;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float acc = 0.0f;
    for (std::int64_t ib = 0; ib < b; ++ib) acc += to_float(dx[ib * sh + j]);
    dwpe[j] += acc;
  }
}

}  // namespace

template <class T>
void embedding_forward(const std::int32_t* tokens, std::int64_t n, const T* wte, std::int64_t vocab_start,
                       std::int64_t vt, std::int64_t h, T* out, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  embedding_forward_kernel<<<dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks), Cfg::kThreads, 0, st>>>(
      tokens, n, wte, vocab_start, vt, h, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void embedding_backward(const std::int32_t* tokens, std::int64_t n, const T* dout, std::int64_t vocab_start,
                        std::int64_t vt, std::int64_t h, float* dwte, cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  embedding_backward_kernel<<<dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks), Cfg::kThreads, 0, st>>>(
      tokens, n, dout, vocab_start, vt, h, dwte);
  PTDP_CUDA_CHECK_LAUNCH();
}

// Sort (key, position) pairs by key with CUB's stable radix sort, then one
// block per run of a key sums its rows (embedding_backward_sorted_kernel).
template <class T>
void embedding_backward_deterministic(const std::int32_t* tokens, std::int64_t n, const T* dout,
                                      std::int64_t vocab_start, std::int64_t vt, std::int64_t h, float* dwte,
                                      cudaStream_t st) {
  if (n <= 0 || h <= 0) return;
  if (n > std::numeric_limits<std::int32_t>::max() || vt >= std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument("embedding_backward_deterministic: n and Vt must be below 2^31");
  StreamScratch<std::uint32_t> keys(2 * static_cast<std::size_t>(n), st);
  StreamScratch<std::int32_t> positions(2 * static_cast<std::size_t>(n), st);
  std::uint32_t* keys_sorted = keys.get() + n;
  std::int32_t* positions_sorted = positions.get() + n;
  sort_keys_kernel<<<dev::grid_blocks(n, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
      tokens, n, vocab_start, vt, keys.get(), positions.get());
  PTDP_CUDA_CHECK_LAUNCH();
  const int items = static_cast<int>(n), end_bit = sort_key_bits(vt);
  std::size_t temp_bytes = 0;
  PTDP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), keys_sorted, positions.get(),
                                                  positions_sorted, items, 0, end_bit, st));
  StreamScratch<unsigned char> temp(temp_bytes, st);
  PTDP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys.get(), keys_sorted, positions.get(),
                                                  positions_sorted, items, 0, end_bit, st));
  const int w = row_width(Cfg::kVec, h, {{dout, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    embedding_backward_sorted_kernel<decltype(width)::value>
        <<<dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks), Cfg::kThreads, 0, st>>>(keys_sorted, positions_sorted, n,
                                                                               dout, vt, h, dwte);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void position_forward(const T* wpe, std::int64_t b, std::int64_t s, std::int64_t h, T* x, cudaStream_t st) {
  if (b <= 0 || s <= 0 || h <= 0) return;
  position_forward_kernel<<<dev::grid_blocks(b * s * h, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
      wpe, b, s * h, x);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void position_backward(const T* dx, std::int64_t b, std::int64_t s, std::int64_t h, float* dwpe, cudaStream_t st) {
  if (b <= 0 || s <= 0 || h <= 0) return;
  position_backward_kernel<<<dev::grid_blocks(s * h, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
      dx, b, s * h, dwpe);
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                     \
  template void embedding_forward<T>(const std::int32_t*, std::int64_t, const T*, std::int64_t, std::int64_t,   \
                                     std::int64_t, T*, cudaStream_t);                                           \
  template void embedding_backward<T>(const std::int32_t*, std::int64_t, const T*, std::int64_t, std::int64_t,  \
                                      std::int64_t, float*, cudaStream_t);                                      \
  template void embedding_backward_deterministic<T>(const std::int32_t*, std::int64_t, const T*, std::int64_t,  \
                                                    std::int64_t, std::int64_t, float*, cudaStream_t);          \
  template void position_forward<T>(const T*, std::int64_t, std::int64_t, std::int64_t, T*, cudaStream_t);      \
  template void position_backward<T>(const T*, std::int64_t, std::int64_t, std::int64_t, float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
