// Fused causal attention (FlashAttention-2 style) on CUDA cores: forward with
// an online softmax, backward by recomputing P per key tile; the s×s matrix
// never exists. Same meaning and layouts as core/kernels/cpu/attention.h.
// Letters: b micro-batch, s sequence, a heads, d head dim, D = DMAX (d rounded
// up), Br/Bc query/key rows of a tile, bh = ib·a + ih one (batch, head).
// qkv, dqkv (b, s, a, 3, d); out, dout, dQ workspace (b, s, a, d); lse, D (b, a, s) fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/flash_attention_config.h"
#include "core/kernels/cuda/kernels.h"

namespace ptdp::cuda {
namespace {

using flash::FlashConfig;
using flash::FlashTiles;
constexpr int kR = FlashConfig::kRowsPerWarp;
constexpr unsigned kFullMask = 0xffffffffu;

// --- private device helpers -------------------------------------------------------

__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
template <class T> __device__ __forceinline__ T from_f32(float x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}

__device__ __forceinline__ float warp_max(float x) {
  for (int o = FlashConfig::kWarpSize / 2; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(kFullMask, x, o));
  return x;
}
// Butterfly sum: every lane ends with the same bits (each step adds the same pair).
__device__ __forceinline__ float warp_sum(float x) {
  for (int o = FlashConfig::kWarpSize / 2; o > 0; o /= 2) x += __shfl_xor_sync(kFullMask, x, o);
  return x;
}

// dst (Br, DMAX), row stride kStride = rows row0.. of src (row stride `stride`,
// first d columns) as fp32; rows ≥ s and columns ≥ d are zero. Whole block.
template <class T, int DMAX>
__device__ void load_tile(float* dst, const T* src, std::int64_t stride, int row0, int s, int d) {
  constexpr int kRows = FlashConfig::kBr;
  for (int i = threadIdx.x; i < kRows * DMAX; i += FlashConfig::kThreads) {
    const int r = i / DMAX, e = i % DMAX;
    const int row = row0 + r;
    dst[r * FlashTiles<DMAX>::kStride + e] = (row < s && e < d) ? to_f32(src[row * stride + e]) : 0.0f;
  }
}

// acc[r] = Σ_e a[r][e] · b[e] for the warp's kR rows of a (broadcast reads) and
// this lane's row b; both row-major with stride kStride, zero-padded to DMAX.
template <int DMAX>
__device__ __forceinline__ void dot_rows(const float* a, const float* b, float (&acc)[kR]) {
  constexpr int kStride = FlashTiles<DMAX>::kStride;
#pragma unroll
  for (int r = 0; r < kR; ++r) acc[r] = 0.0f;
#pragma unroll 2
  for (int e = 0; e < DMAX; e += 4) {
    const float4 bv = *reinterpret_cast<const float4*>(b + e);
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const float4 av = *reinterpret_cast<const float4*>(a + r * kStride + e);
      acc[r] = fmaf(av.x, bv.x, fmaf(av.y, bv.y, fmaf(av.z, bv.z, fmaf(av.w, bv.w, acc[r]))));
    }
  }
}

// acc[r][c] += Σ_j w[r·Bc + j] · m[j][lane + 32c], j < Bc: the warp's kR rows of a
// (·, Bc) score tile times a (Bc, DMAX) tile. Lane owns columns lane + 32c.
template <int DMAX>
__device__ __forceinline__ void rows_times_tile(const float* w, const float* m, int lane,
                                                float (&acc)[kR][DMAX / 32]) {
  constexpr int kStride = FlashTiles<DMAX>::kStride, kCols = DMAX / 32;
#pragma unroll 1
  for (int j = 0; j < FlashConfig::kBc; j += 4) {
    float mv[4][kCols];
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) mv[jj][c] = m[(j + jj) * kStride + lane + 32 * c];
    }
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const float4 w4 = *reinterpret_cast<const float4*>(w + r * FlashConfig::kBc + j);
      const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r][c] = fmaf(wv[jj], mv[jj][c], acc[r][c]);
      }
    }
  }
}

// acc[r][c] += Σ_q w[q·Bc + r] · m[q][lane + 32c], q < Br: the transpose of the warp's
// kR columns of a (Br, Bc) score tile (w points at the first) times a (Br, DMAX) tile.
template <int DMAX>
__device__ __forceinline__ void cols_times_tile(const float* w, const float* m, int lane,
                                                float (&acc)[kR][DMAX / 32]) {
  constexpr int kStride = FlashTiles<DMAX>::kStride, kCols = DMAX / 32;
#pragma unroll 2
  for (int q = 0; q < FlashConfig::kBr; ++q) {
    float mv[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) mv[c] = m[q * kStride + lane + 32 * c];
#pragma unroll
    for (int r4 = 0; r4 < kR; r4 += 4) {
      const float4 w4 = *reinterpret_cast<const float4*>(w + q * FlashConfig::kBc + r4);
      const float wv[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[r4 + i][c] = fmaf(wv[i], mv[c], acc[r4 + i][c]);
      }
    }
  }
}

// Pointers of one (batch, head) inside the packed layouts; positions advance by the row strides.
struct HeadView {
  std::int64_t qkv_row, out_row;  // a·3·d and a·d
  std::int64_t qkv0, out0, lse0;  // offsets of position 0 (q slot for qkv)
  __device__ HeadView(int bh, int s, int a, int d)
      : qkv_row(std::int64_t{3} * a * d), out_row(std::int64_t{a} * d),
        qkv0((std::int64_t{bh / a} * s * a + bh % a) * 3 * d), out0((std::int64_t{bh / a} * s * a + bh % a) * d),
        lse0(std::int64_t{bh} * s) {}
};

// --- forward ---------------------------------------------------------------------

// One online-softmax step of a row for this lane's key column (score x): sets
// p = exp(x − m_new) (0 where masked), updates the row's running max m and sum l,
// and returns exp(m_old − m_new), the factor that rescales the old accumulator.
__device__ __forceinline__ float online_softmax_step(float x, bool valid, float& m, float& l, float& p) {
  x = valid ? x : -INFINITY;
  const float m_new = fmaxf(m, warp_max(x));
  const float m_use = m_new == -INFINITY ? 0.0f : m_new;  // no valid column yet: keep exp finite
  p = valid ? expf(x - m_use) : 0.0f;
  const float alpha = expf(m - m_use);  // m = −inf (nothing seen yet) gives 0
  l = l * alpha + warp_sum(p);
  m = m_new;
  return alpha;
}

// Block (bh, query tile): out rows [q0, q0 + Br) and their lse. Warp w owns query rows
// w·kR.. of the tile; in the score phase lane j owns key column j, in the P·V phase
// output columns lane + 32c.
template <class T, int DMAX>
__global__ void __launch_bounds__(FlashConfig::kThreads)
    flash_forward_kernel(const T* qkv, int s, int a, int d, float scale, T* out, float* lse) {
  using C = FlashConfig;
  using Tiles = FlashTiles<DMAX>;
  constexpr int kCols = DMAX / 32;
  extern __shared__ float4 smem4[];
  float* q_s = reinterpret_cast<float*>(smem4);  // (Br, DMAX)
  float* k_s = q_s + Tiles::kRowTile;            // (Bc, DMAX)
  float* v_s = k_s + Tiles::kRowTile;            // (Bc, DMAX)
  float* p_s = v_s + Tiles::kRowTile;            // (Br, Bc)

  const HeadView hv(static_cast<int>(blockIdx.x), s, a, d);
  const int q0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * C::kBr;  // longest rows first
  const int warp = static_cast<int>(threadIdx.x) / C::kWarpSize, lane = static_cast<int>(threadIdx.x) % C::kWarpSize;
  const int row0 = warp * kR;  // the warp's first row inside the tile
  const T* head = qkv + hv.qkv0;
  load_tile<T, DMAX>(q_s, head, hv.qkv_row, q0, s, d);

  float o[kR][kCols] = {}, m[kR], l[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) m[r] = -INFINITY, l[r] = 0.0f;

  const int key_tiles = (min(q0 + C::kBr, s) + C::kBc - 1) / C::kBc;  // causal limit
  for (int kt = 0; kt < key_tiles; ++kt) {
    const int k0 = kt * C::kBc;
    __syncthreads();  // the previous K, V, P are no longer read
    load_tile<T, DMAX>(k_s, head + d, hv.qkv_row, k0, s, d);
    load_tile<T, DMAX>(v_s, head + 2 * d, hv.qkv_row, k0, s, d);
    __syncthreads();

    float sc[kR];
    dot_rows<DMAX>(q_s + row0 * Tiles::kStride, k_s + lane * Tiles::kStride, sc);
    const int k = k0 + lane;
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int q = q0 + row0 + r;
      float p;
      const float alpha = online_softmax_step(sc[r] * scale, k <= q && k < s, m[r], l[r], p);
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[r][c] *= alpha;
      p_s[(row0 + r) * C::kBc + lane] = p;
    }
    __syncwarp();  // P rows are private to the warp
    rows_times_tile<DMAX>(p_s + row0 * C::kBc, v_s, lane, o);
  }

#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int q = q0 + row0 + r;
    if (q >= s) continue;
    const float inv_l = 1.0f / l[r];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int e = lane + 32 * c;
      if (e < d) out[hv.out0 + q * hv.out_row + e] = from_f32<T>(o[r][c] * inv_l);
    }
    if (lane == 0) lse[hv.lse0 + q] = m[r] + logf(l[r]);
  }
}

// --- backward --------------------------------------------------------------------

// D[bh, t] = Σ_e dO[t, e] · O[t, e] (fp32): one warp per (ib, t, ih) row of out.
template <class T>
__global__ void __launch_bounds__(FlashConfig::kElementwiseThreads)
    flash_row_dot_kernel(const T* dout, const T* out, std::int64_t rows, int s, int a, int d, float* dvec) {
  constexpr int kWarpsPerBlock = FlashConfig::kElementwiseThreads / FlashConfig::kWarpSize;
  const std::int64_t row = std::int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / FlashConfig::kWarpSize;
  if (row >= rows) return;  // whole warps leave together
  const int lane = static_cast<int>(threadIdx.x) % FlashConfig::kWarpSize;
  float acc = 0.0f;
  for (int e = lane; e < d; e += FlashConfig::kWarpSize) acc += to_f32(dout[row * d + e]) * to_f32(out[row * d + e]);
  acc = warp_sum(acc);
  if (lane == 0) {
    const std::int64_t ih = row % a, t = (row / a) % s, ib = row / a / s;
    dvec[(ib * a + ih) * s + t] = acc;
  }
}

// dqkv q slots (T) = the fp32 dQ workspace (b, s, a, d).
template <class T>
__global__ void __launch_bounds__(FlashConfig::kElementwiseThreads)
    flash_dq_store_kernel(const float* dq, std::int64_t n, int d, T* dqkv) {
  const std::int64_t step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += step) {
    dqkv[(i / d) * 3 * d + i % d] = from_f32<T>(dq[i]);
  }
}

// Phase 1 of a (query tile, key tile) pair: the warp's query rows × this lane's key
// column. P = exp(S − lse) and dS·scale = P ∘ (dP − D) · scale into p_s, ds_s (Br, Bc).
template <int DMAX>
__device__ __forceinline__ void backward_scores(const float* q_s, const float* do_s, const float* k_s,
                                                const float* v_s, const float* lse_s, const float* d_s, int q0,
                                                int k0, int s, float scale, float* p_s, float* ds_s) {
  constexpr int kStride = FlashTiles<DMAX>::kStride;
  const int warp = static_cast<int>(threadIdx.x) / FlashConfig::kWarpSize;
  const int lane = static_cast<int>(threadIdx.x) % FlashConfig::kWarpSize;
  const int row0 = warp * kR, k = k0 + lane;
  float sc[kR], dp[kR];
  dot_rows<DMAX>(q_s + row0 * kStride, k_s + lane * kStride, sc);   // S = Q Kᵀ
  dot_rows<DMAX>(do_s + row0 * kStride, v_s + lane * kStride, dp);  // dP = dO Vᵀ
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int row = row0 + r, q = q0 + row;
    const float p = (k <= q && q < s) ? expf(sc[r] * scale - lse_s[row]) : 0.0f;
    p_s[row * FlashConfig::kBc + lane] = p;
    ds_s[row * FlashConfig::kBc + lane] = p * (dp[r] - d_s[row]) * scale;
  }
}

// Block (bh, key tile): K_j, V_j stay in smem; for each query tile i ≥ j: recompute
// P, dS; dV_j += Pᵀ dO_i, dK_j += dSᵀ Q_i (registers, warp w owns key rows w·kR..);
// dQ_i += dS K_j (fp32 atomics, warp w owns query rows w·kR..). Lane owns columns lane + 32c.
template <class T, int DMAX>
__global__ void __launch_bounds__(FlashConfig::kThreads, FlashConfig::kBwdMinBlocks)
    flash_backward_kernel(const T* dout, const T* qkv, const float* lse, const float* dvec, int s, int a, int d,
                          float scale, T* dqkv, float* dq) {
  using C = FlashConfig;
  using Tiles = FlashTiles<DMAX>;
  constexpr int kCols = DMAX / 32;
  extern __shared__ float4 smem4[];
  float* k_s = reinterpret_cast<float*>(smem4);  // (Bc, DMAX)
  float* v_s = k_s + Tiles::kRowTile;            // (Bc, DMAX)
  float* q_s = v_s + Tiles::kRowTile;            // (Br, DMAX)
  float* do_s = q_s + Tiles::kRowTile;           // (Br, DMAX)
  float* p_s = do_s + Tiles::kRowTile;           // (Br, Bc)
  float* ds_s = p_s + Tiles::kScoreTile;         // (Br, Bc), already times scale
  float* lse_s = ds_s + Tiles::kScoreTile;       // (Br)
  float* d_s = lse_s + C::kBr;                   // (Br)

  const HeadView hv(static_cast<int>(blockIdx.x), s, a, d);
  const int k0 = static_cast<int>(blockIdx.y) * C::kBc;
  const int warp = static_cast<int>(threadIdx.x) / C::kWarpSize, lane = static_cast<int>(threadIdx.x) % C::kWarpSize;
  const int row0 = warp * kR;
  load_tile<T, DMAX>(k_s, qkv + hv.qkv0 + d, hv.qkv_row, k0, s, d);
  load_tile<T, DMAX>(v_s, qkv + hv.qkv0 + 2 * d, hv.qkv_row, k0, s, d);

  float dk[kR][kCols] = {}, dv[kR][kCols] = {};
  const int query_tiles = (s + C::kBr - 1) / C::kBr;
  for (int qt = k0 / C::kBr; qt < query_tiles; ++qt) {  // earlier query rows see none of these keys
    const int q0 = qt * C::kBr;
    __syncthreads();  // the previous Q, dO, P, dS, lse, D are no longer read
    load_tile<T, DMAX>(q_s, qkv + hv.qkv0, hv.qkv_row, q0, s, d);
    load_tile<T, DMAX>(do_s, dout + hv.out0, hv.out_row, q0, s, d);
    for (int i = static_cast<int>(threadIdx.x); i < C::kBr; i += C::kThreads) {
      lse_s[i] = q0 + i < s ? lse[hv.lse0 + q0 + i] : 0.0f;
      d_s[i] = q0 + i < s ? dvec[hv.lse0 + q0 + i] : 0.0f;
    }
    __syncthreads();
    backward_scores<DMAX>(q_s, do_s, k_s, v_s, lse_s, d_s, q0, k0, s, scale, p_s, ds_s);
    __syncthreads();  // phases below read other warps' rows of P and dS

    cols_times_tile<DMAX>(p_s + row0, do_s, lane, dv);  // dV_j += Pᵀ dO_i
    cols_times_tile<DMAX>(ds_s + row0, q_s, lane, dk);  // dK_j += dSᵀ Q_i
    float dq_acc[kR][kCols] = {};
    rows_times_tile<DMAX>(ds_s + row0 * C::kBc, k_s, lane, dq_acc);  // dQ_i += dS K_j
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      const int q = q0 + row0 + r;
      if (q >= s) continue;
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int e = lane + 32 * c;
        if (e < d) atomicAdd(dq + hv.out0 + q * hv.out_row + e, dq_acc[r][c]);
      }
    }
  }

  T* dk_out = dqkv + hv.qkv0 + d;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const int kr = k0 + row0 + r;
    if (kr >= s) continue;
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int e = lane + 32 * c;
      if (e >= d) continue;
      dk_out[kr * hv.qkv_row + e] = from_f32<T>(dk[r][c]);
      dk_out[kr * hv.qkv_row + d + e] = from_f32<T>(dv[r][c]);
    }
  }
}

// --- launchers ---------------------------------------------------------------------

// Checked sizes of one call as the kernels take them.
struct Shape {
  int b, s, a, d, dmax;
  std::int64_t rows() const { return std::int64_t{b} * s * a; }  // (ib, t, ih) rows of out
  bool empty() const { return b == 0 || s == 0 || a == 0; }
};

Shape check_shape(const char* what, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t d) {
  using C = FlashConfig;
  const auto fail_arg = [&](const std::string& why) {
    throw std::invalid_argument(std::string(what) + ": " + why + " (b " + std::to_string(b) + ", s " +
                                std::to_string(s) + ", a " + std::to_string(a) + ", d " + std::to_string(d) + ")");
  };
  if (b < 0 || s < 0 || a < 0 || d < 1) fail_arg("negative size or head dim d < 1");
  if (d > C::kMaxHeadDim) fail_arg("head dim d > " + std::to_string(C::kMaxHeadDim) + " is not supported");
  if (s > std::int64_t{C::kMaxGridY} * C::kBr) fail_arg("sequence longer than the grid allows");
  if (b * a > std::numeric_limits<int>::max()) fail_arg("b·a exceeds the grid");
  const int dmax = d <= 32 ? 32 : d <= 64 ? 64 : d <= 96 ? 96 : 128;
  return {static_cast<int>(b), static_cast<int>(s), static_cast<int>(a), static_cast<int>(d), dmax};
}

template <class Kernel>
void allow_smem(Kernel* kernel, std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(FlashConfig::kStaticSmemBytes)) {
    PTDP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
}

float softmax_scale(int d) { return 1.0f / std::sqrt(static_cast<float>(d)); }

template <class T, int DMAX>
void launch_forward(const T* qkv, const Shape& x, T* out, float* lse, cudaStream_t st) {
  constexpr std::size_t kSmem = FlashTiles<DMAX>::kFwdBytes;
  auto* kernel = flash_forward_kernel<T, DMAX>;
  allow_smem(kernel, kSmem);
  const dim3 grid(static_cast<unsigned>(x.b * x.a), static_cast<unsigned>((x.s + FlashConfig::kBr - 1) / FlashConfig::kBr));
  kernel<<<grid, FlashConfig::kThreads, kSmem, st>>>(qkv, x.s, x.a, x.d, softmax_scale(x.d), out, lse);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T, int DMAX>
void launch_backward_main(const T* dout, const T* qkv, const float* lse, const float* dvec, const Shape& x, T* dqkv,
                          float* dq, cudaStream_t st) {
  constexpr std::size_t kSmem = FlashTiles<DMAX>::kBwdBytes;
  auto* kernel = flash_backward_kernel<T, DMAX>;
  allow_smem(kernel, kSmem);
  const dim3 grid(static_cast<unsigned>(x.b * x.a), static_cast<unsigned>((x.s + FlashConfig::kBc - 1) / FlashConfig::kBc));
  kernel<<<grid, FlashConfig::kThreads, kSmem, st>>>(dout, qkv, lse, dvec, x.s, x.a, x.d, softmax_scale(x.d), dqkv, dq);
  PTDP_CUDA_CHECK_LAUNCH();
}

unsigned elementwise_blocks(std::int64_t work_items) {
  const std::int64_t blocks = (work_items + FlashConfig::kElementwiseThreads - 1) / FlashConfig::kElementwiseThreads;
  return static_cast<unsigned>(std::min<std::int64_t>(std::max<std::int64_t>(blocks, 1), FlashConfig::kElementwiseMaxBlocks));
}

template <class T>
void launch_row_dot(const T* dout, const T* out, const Shape& x, float* dvec, cudaStream_t st) {
  constexpr int kWarpsPerBlock = FlashConfig::kElementwiseThreads / FlashConfig::kWarpSize;
  const auto blocks = static_cast<unsigned>((x.rows() + kWarpsPerBlock - 1) / kWarpsPerBlock);  // one warp per row
  flash_row_dot_kernel<T><<<blocks, FlashConfig::kElementwiseThreads, 0, st>>>(dout, out, x.rows(), x.s, x.a, x.d, dvec);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_dq_store(const float* dq, const Shape& x, T* dqkv, cudaStream_t st) {
  const std::int64_t n = x.rows() * x.d;
  flash_dq_store_kernel<T><<<elementwise_blocks(n), FlashConfig::kElementwiseThreads, 0, st>>>(dq, n, x.d, dqkv);
  PTDP_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::int64_t flash_attention_workspace_floats(std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t d) {
  return b * s * a * d + b * a * s;  // dQ (b, s, a, d), then D (b, a, s)
}

template <class T>
void flash_attention_forward(const T* qkv, std::int64_t b, std::int64_t s, std::int64_t a, std::int64_t d, T* out,
                             float* lse, cudaStream_t st) {
  const Shape x = check_shape("flash_attention_forward", b, s, a, d);
  if (x.empty()) return;
  switch (x.dmax) {
    case 32: launch_forward<T, 32>(qkv, x, out, lse, st); break;
    case 64: launch_forward<T, 64>(qkv, x, out, lse, st); break;
    case 96: launch_forward<T, 96>(qkv, x, out, lse, st); break;
    default: launch_forward<T, 128>(qkv, x, out, lse, st); break;
  }
}

template <class T>
void flash_attention_backward(const T* dout, const T* qkv, const T* out, const float* lse, std::int64_t b,
                              std::int64_t s, std::int64_t a, std::int64_t d, T* dqkv, float* workspace,
                              cudaStream_t st) {
  const Shape x = check_shape("flash_attention_backward", b, s, a, d);
  if (x.empty()) return;
  float* dq = workspace;                      // (b, s, a, d), accumulated by atomics
  float* dvec = workspace + x.rows() * x.d;   // (b, a, s), written by launch_row_dot
  PTDP_CUDA_CHECK(cudaMemsetAsync(dq, 0, sizeof(float) * static_cast<std::size_t>(x.rows() * x.d), st));
  launch_row_dot(dout, out, x, dvec, st);
  switch (x.dmax) {
    case 32: launch_backward_main<T, 32>(dout, qkv, lse, dvec, x, dqkv, dq, st); break;
    case 64: launch_backward_main<T, 64>(dout, qkv, lse, dvec, x, dqkv, dq, st); break;
    case 96: launch_backward_main<T, 96>(dout, qkv, lse, dvec, x, dqkv, dq, st); break;
    default: launch_backward_main<T, 128>(dout, qkv, lse, dvec, x, dqkv, dq, st); break;
  }
  launch_dq_store(dq, x, dqkv, st);
}

#define PTDP_INSTANTIATE(T)                                                                                     \
  template void flash_attention_forward<T>(const T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, T*, \
                                           float*, cudaStream_t);                                              \
  template void flash_attention_backward<T>(const T*, const T*, const T*, const float*, std::int64_t,          \
                                            std::int64_t, std::int64_t, std::int64_t, T*, float*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
