// The fused SwiGLU activation, CUDA (Llama's MLP; see kernels.h and ops.h):
// one pass reads each row's gate and up halves and writes y, and one pass
// back writes both halves of dpre. fp32 math; 128-bit accesses when f and the
// pointers allow (vec.cuh). Letters: n rows (tokens), f the MLP width on this
// rank; pre, dpre (n, 2f) = [gate | up] per row; y, dy (n, f).
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

struct SwigluConfig {
  static constexpr int kThreads = 256;     // 1-D grid-stride over the n·f outputs
  static constexpr int kMaxBlocks = 4096;  // enough to fill an H100 several times
  static constexpr int kVec = 8;           // 16-bit elements per 128-bit access
};
using Cfg = SwigluConfig;

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Output element i = (row, j) of a (n, f) array reads pre[row, j] (gate) and
// pre[row, f + j] (up); a chunk of W never crosses a row (f is a multiple of W).
__device__ inline std::int64_t gate_index(std::int64_t i, std::int64_t f) { return (i / f) * 2 * f + i % f; }

// y = silu(gate)·up, silu(x) = x·sigmoid(x).
template <int W, class T> __global__ void swiglu_forward_kernel(const T* pre, std::int64_t n, std::int64_t f, T* y) {
  vec::for_each_chunk<W>(n * f, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    const std::int64_t g = gate_index(i, f);
    float gate[K], up[K];
    vec::load<K>(pre + g, gate);
    vec::load<K>(pre + g + f, up);
    for (int k = 0; k < K; ++k) gate[k] = gate[k] * sigmoid(gate[k]) * up[k];
    vec::store<K>(y + i, gate);
  });
}

// dgate = dy·up·silu'(gate), silu'(x) = σ(x)·(1 + x·(1 − σ(x))); dup = dy·silu(gate).
// Each chunk reads gate and up before writing them: dpre may alias pre.
template <int W, class T>
__global__ void swiglu_backward_kernel(const T* dy, const T* pre, std::int64_t n, std::int64_t f, T* dpre) {
  vec::for_each_chunk<W>(n * f, [&](std::int64_t i, auto width) {
    constexpr int K = decltype(width)::value;
    const std::int64_t g = gate_index(i, f);
    float d[K], gate[K], up[K];
    vec::load<K>(dy + i, d);
    vec::load<K>(pre + g, gate);
    vec::load<K>(pre + g + f, up);
    for (int k = 0; k < K; ++k) {
      const float sg = sigmoid(gate[k]);
      const float silu = gate[k] * sg;
      gate[k] = d[k] * up[k] * sg * (1.0f + gate[k] * (1.0f - sg));
      up[k] = d[k] * silu;
    }
    vec::store<K>(dpre + g, gate);
    vec::store<K>(dpre + g + f, up);
  });
}

unsigned blocks_for(std::int64_t n, int width) {
  return dev::grid_blocks(dev::ceil_div(n, width), Cfg::kThreads, Cfg::kMaxBlocks);
}

}  // namespace

template <class T> void swiglu_forward(const T* pre, std::int64_t n, std::int64_t f, T* y, cudaStream_t st) {
  if (n <= 0 || f <= 0) return;
  const int w = row_width(Cfg::kVec, f, {{pre, sizeof(T)}, {y, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    constexpr int W = decltype(width)::value;
    swiglu_forward_kernel<W><<<blocks_for(n * f, W), Cfg::kThreads, 0, st>>>(pre, n, f, y);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void swiglu_backward(const T* dy, const T* pre, std::int64_t n, std::int64_t f, T* dpre, cudaStream_t st) {
  if (n <= 0 || f <= 0) return;
  const int w = row_width(Cfg::kVec, f, {{dy, sizeof(T)}, {pre, sizeof(T)}, {dpre, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    constexpr int W = decltype(width)::value;
    swiglu_backward_kernel<W><<<blocks_for(n * f, W), Cfg::kThreads, 0, st>>>(dy, pre, n, f, dpre);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                  \
  template void swiglu_forward<T>(const T*, std::int64_t, std::int64_t, T*, cudaStream_t); \
  template void swiglu_backward<T>(const T*, const T*, std::int64_t, std::int64_t, T*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
