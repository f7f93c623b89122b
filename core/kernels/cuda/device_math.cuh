// Device-side helpers shared by ptdp's CUDA kernels: fp32 <-> element-type
// conversions (float, __half, __nv_bfloat16), warp/block reductions in fp32,
// the tanh GeLU and its derivative, and grid arithmetic for launchers.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace ptdp::cuda::dev {

// --- conversions ----------------------------------------------------------------
__host__ __device__ inline float to_float(float x) { return x; }
__host__ __device__ inline float to_float(__half x) { return __half2float(x); }
__host__ __device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// fp32 rounded to nearest (even) T.
template <class T> __host__ __device__ T from_float(float x);
template <> __host__ __device__ inline float from_float<float>(float x) { return x; }
template <> __host__ __device__ inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// --- reductions (fp32); every thread of the warp / block must call them ----------
constexpr int kWarpSize = 32;

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  static constexpr float kIdentity = 0.0f;
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  static constexpr float kIdentity = -__builtin_huge_valf();
};

// Every lane gets the reduction over the 32 lanes of its warp.
template <class Op> __device__ inline float warp_reduce(float v, Op op) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Every thread of a 1-D block of exactly kThreads threads gets the reduction over
// the block. Safe to call repeatedly in one kernel (the leading barrier keeps a
// call from overwriting what the previous call's readers still need).
template <int kThreads, class Op> __device__ inline float block_reduce(float v, Op op) {
  static_assert(kThreads % kWarpSize == 0 && kThreads <= 1024, "block of whole warps");
  constexpr int kWarps = kThreads / kWarpSize;
  __shared__ float partial[kWarps];
  __shared__ float total;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize, warp = static_cast<int>(threadIdx.x) / kWarpSize;
  v = warp_reduce(v, op);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < kWarps ? partial[lane] : Op::kIdentity;
    w = warp_reduce(w, op);
    if (lane == 0) total = w;
  }
  __syncthreads();
  return total;
}
template <int kThreads> __device__ inline float block_sum(float v) { return block_reduce<kThreads>(v, SumOp{}); }
template <int kThreads> __device__ inline float block_max(float v) { return block_reduce<kThreads>(v, MaxOp{}); }

// --- GeLU, tanh form (as core/kernels/cpu/elementwise.cpp) -------------------------
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))).
__device__ inline float gelu(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + tanhf(u));
}
// d gelu / dx = 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·sqrt(2/pi)·(1 + 3·0.044715·x²).
__device__ inline float gelu_grad(float x) {
  const float th = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

// --- grid arithmetic (host) --------------------------------------------------------
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// Blocks for `work` items at `per_block` items a block, at most max_blocks
// (kernels loop grid-stride over the rest); at least 1.
inline unsigned grid_blocks(std::int64_t work, std::int64_t per_block, std::int64_t max_blocks) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(ceil_div(work, per_block), 1, max_blocks));
}

}  // namespace ptdp::cuda::dev
