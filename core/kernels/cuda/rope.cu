// Rotary position embedding, CUDA (Llama's; see kernels.h and ops.h), in
// place, rotate-half convention: in each head the pair (j, j + d/2), j < d/2,
// of the token at position p turns by the angle p·theta^(-2j/d). One thread a
// pair, over the query heads of q and the key heads of kv together; angles in
// fp32 on the fly (inverse frequency by exp2 of a host-computed log2 theta,
// then full-range sincosf, not the fast intrinsic: p·freq reaches thousands).
// Letters: b micro-batch, s sequence, a query heads, g key/value heads, d head
// dim; q (b, s, a, d), kv (b, s, g, 2, d) with k at offset 0 of each head.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

struct RopeConfig {
  static constexpr int kThreads = 256;     // one thread a (token, head, j) pair
  static constexpr int kMaxBlocks = 8192;  // grid-stride beyond this
};
using Cfg = RopeConfig;

struct RopeShape {
  std::int64_t b, s, a, g, head_dim;
};

// Turns every pair by `sign`·angle: +1 forward, −1 backward (the transpose of a rotation).
// x1' = x1·cos − x2·sin, x2' = x2·cos + x1·sin.
template <class T>
__global__ void rope_kernel(T* q, T* kv, RopeShape x, float log2_theta, float sign) {
  const std::int64_t half = x.head_dim / 2, heads = x.a + x.g;
  const std::int64_t pairs = x.b * x.s * heads * half;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t j = i % half, head = (i / half) % heads, token = i / (half * heads);
    const std::int64_t p = token % x.s;
    T* row = head < x.a ? q + (token * x.a + head) * x.head_dim : kv + (token * x.g + (head - x.a)) * 2 * x.head_dim;
    const float freq = exp2f(-static_cast<float>(2 * j) / static_cast<float>(x.head_dim) * log2_theta);
    float sn, cs;
    sincosf(static_cast<float>(p) * freq, &sn, &cs);
    sn *= sign;
    const float x1 = dev::to_float(row[j]), x2 = dev::to_float(row[j + half]);
    row[j] = dev::from_float<T>(x1 * cs - x2 * sn);
    row[j + half] = dev::from_float<T>(x2 * cs + x1 * sn);
  }
}

template <class T> void launch(T* q, T* kv, const RopeShape& x, double theta, float sign, cudaStream_t st) {
  const std::int64_t pairs = x.b * x.s * (x.a + x.g) * (x.head_dim / 2);
  if (pairs <= 0) return;
  rope_kernel<<<dev::grid_blocks(pairs, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
      q, kv, x, static_cast<float>(std::log2(theta)), sign);
  PTDP_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T>
void rope_forward(T* q, T* kv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g, std::int64_t head_dim,
                  double theta, cudaStream_t st) {
  launch(q, kv, RopeShape{b, s, a, g, head_dim}, theta, 1.0f, st);
}

template <class T>
void rope_backward(T* dq, T* dkv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t g, std::int64_t head_dim,
                   double theta, cudaStream_t st) {
  launch(dq, dkv, RopeShape{b, s, a, g, head_dim}, theta, -1.0f, st);
}

#define PTDP_INSTANTIATE(T)                                                                                 \
  template void rope_forward<T>(T*, T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, \
                                double, cudaStream_t);                                                      \
  template void rope_backward<T>(T*, T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, \
                                 double, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
