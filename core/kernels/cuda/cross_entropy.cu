// Vocabulary-parallel cross-entropy pieces, CUDA (see kernels.h and
// core/kernels/cpu/cross_entropy.h): per-row max and sum of exponentials
// (one block per row), the target's logit and the loss (one thread per row),
// and dlogits = scale·(softmax − one-hot) from the global max and sum. Rows go
// by 128-bit vectors when Vt and the pointers allow (vec.cuh).
// Letters: n rows (tokens), Vt shard width covering ids [vocab_start, +Vt).
// logits, dlogits (n, Vt) T; row_max, sum_exp, target_logit, loss (n) fp32.
#include <cmath>
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/kernels.h"
#include "core/kernels/cuda/vec.cuh"
#include "core/kernels/cuda/vector_plan.h"

namespace ptdp::cuda {
namespace {

using dev::from_float;
using dev::to_float;

struct CrossEntropyConfig {
  static constexpr int kThreads = 256;         // row kernels: one block per row, threads over Vt
  static constexpr int kMaxRowBlocks = 16384;  // grid-stride over rows beyond this
  static constexpr int kRowThreads = 128;      // per-row scalar kernels: one thread per row
  static constexpr int kVec = 8;               // 16-bit logits per 128-bit access
};
using Cfg = CrossEntropyConfig;

// Column of the target inside this shard, or -1 when the target lies elsewhere.
__device__ inline std::int64_t target_col(std::int32_t target, std::int64_t vt, std::int64_t vocab_start) {
  const std::int64_t col = static_cast<std::int64_t>(target) - vocab_start;
  return (col >= 0 && col < vt) ? col : -1;
}

// row_max (n) = max over the shard's columns.
template <int W, class T>
__global__ void row_max_kernel(const T* logits, std::int64_t n, std::int64_t vt, float* row_max) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    float mx = -INFINITY;
    vec::for_each_row_chunk<W>(vt, [&](std::int64_t j, auto) {
      float v[W];
      vec::load<W>(logits + row * vt + j, v);
      for (const float e : v) mx = fmaxf(mx, e);
    });
    mx = dev::block_max<Cfg::kThreads>(mx);
    if (threadIdx.x == 0) row_max[row] = mx;
  }
}

// sum_exp (n) = Σ_j exp(logits[i, j] − row_max[i]) over the shard (row_max global).
template <int W, class T>
__global__ void row_sum_exp_kernel(const T* logits, std::int64_t n, std::int64_t vt, const float* row_max,
                                   float* sum_exp) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float mx = row_max[row];
    float sum = 0.0f;
    vec::for_each_row_chunk<W>(vt, [&](std::int64_t j, auto) {
      float v[W];
      vec::load<W>(logits + row * vt + j, v);
      for (const float e : v) sum += expf(e - mx);
    });
    sum = dev::block_sum<Cfg::kThreads>(sum);
    if (threadIdx.x == 0) sum_exp[row] = sum;
  }
}

// target_logit (n) = the target's logit when in this shard, else 0.
template <class T>
__global__ void target_logit_kernel(const T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t vt,
                                    std::int64_t vocab_start, float* target_logit) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n) return;
  const std::int64_t col = target_col(targets[row], vt, vocab_start);
  target_logit[row] = col >= 0 ? to_float(logits[row * vt + col]) : 0.0f;
}

// loss (n) = log(sum_exp) + row_max − target_logit.
__global__ void loss_kernel(const float* row_max, const float* sum_exp, const float* target_logit, std::int64_t n,
                            float* loss) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < n) loss[row] = logf(sum_exp[row]) + row_max[row] - target_logit[row];
}

// dlogits (n, Vt) = scale·exp(logit − row_max)/sum_exp, minus scale at the target's column.
template <int W, class T>
__global__ void backward_kernel(const T* logits, const std::int32_t* targets, const float* row_max,
                                const float* sum_exp, std::int64_t n, std::int64_t vt, std::int64_t vocab_start,
                                float scale, T* dlogits) {
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const float mx = row_max[row];
    const float inv_sum = 1.0f / sum_exp[row];
    const std::int64_t col = target_col(targets[row], vt, vocab_start);
    vec::for_each_row_chunk<W>(vt, [&](std::int64_t j, auto) {
      float v[W];
      vec::load<W>(logits + row * vt + j, v);
      for (int k = 0; k < W; ++k) {
        v[k] = scale * expf(v[k] - mx) * inv_sum;
        if (j + k == col) v[k] -= scale;
      }
      vec::store<W>(dlogits + row * vt + j, v);
    });
  }
}

unsigned row_blocks(std::int64_t n) { return dev::grid_blocks(n, 1, Cfg::kMaxRowBlocks); }
unsigned scalar_blocks(std::int64_t n) { return dev::grid_blocks(n, Cfg::kRowThreads, INT32_MAX); }

}  // namespace

template <class T> void ce_row_max(const T* logits, std::int64_t n, std::int64_t vt, float* row_max, cudaStream_t st) {
  if (n <= 0) return;
  const int w = row_width(Cfg::kVec, vt, {{logits, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    row_max_kernel<decltype(width)::value><<<row_blocks(n), Cfg::kThreads, 0, st>>>(logits, n, vt, row_max);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void ce_row_sum_exp(const T* logits, std::int64_t n, std::int64_t vt, const float* row_max, float* sum_exp,
                    cudaStream_t st) {
  if (n <= 0) return;
  const int w = row_width(Cfg::kVec, vt, {{logits, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    row_sum_exp_kernel<decltype(width)::value>
        <<<row_blocks(n), Cfg::kThreads, 0, st>>>(logits, n, vt, row_max, sum_exp);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void ce_target_logit(const T* logits, const std::int32_t* targets, std::int64_t n, std::int64_t vt,
                     std::int64_t vocab_start, float* target_logit, cudaStream_t st) {
  if (n <= 0) return;
  target_logit_kernel<<<scalar_blocks(n), Cfg::kRowThreads, 0, st>>>(logits, targets, n, vt, vocab_start,
                                                                      target_logit);
  PTDP_CUDA_CHECK_LAUNCH();
}

void ce_loss(const float* row_max, const float* sum_exp, const float* target_logit, std::int64_t n, float* loss,
             cudaStream_t st) {
  if (n <= 0) return;
  loss_kernel<<<scalar_blocks(n), Cfg::kRowThreads, 0, st>>>(row_max, sum_exp, target_logit, n, loss);
  PTDP_CUDA_CHECK_LAUNCH();
}

template <class T>
void ce_backward(const T* logits, const std::int32_t* targets, const float* row_max, const float* sum_exp,
                 std::int64_t n, std::int64_t vt, std::int64_t vocab_start, float scale, T* dlogits, cudaStream_t st) {
  if (n <= 0 || vt <= 0) return;
  const int w = row_width(Cfg::kVec, vt, {{logits, sizeof(T)}, {dlogits, sizeof(T)}});
  vec::dispatch_width<Cfg::kVec>(w, [&](auto width) {
    backward_kernel<decltype(width)::value><<<row_blocks(n), Cfg::kThreads, 0, st>>>(
        logits, targets, row_max, sum_exp, n, vt, vocab_start, scale, dlogits);
  });
  PTDP_CUDA_CHECK_LAUNCH();
}

#define PTDP_INSTANTIATE(T)                                                                                      \
  template void ce_row_max<T>(const T*, std::int64_t, std::int64_t, float*, cudaStream_t);                       \
  template void ce_row_sum_exp<T>(const T*, std::int64_t, std::int64_t, const float*, float*, cudaStream_t);     \
  template void ce_target_logit<T>(const T*, const std::int32_t*, std::int64_t, std::int64_t, std::int64_t,      \
                                   float*, cudaStream_t);                                                        \
  template void ce_backward<T>(const T*, const std::int32_t*, const float*, const float*, std::int64_t,          \
                               std::int64_t, std::int64_t, float, T*, cudaStream_t);
PTDP_INSTANTIATE(__nv_bfloat16)
PTDP_INSTANTIATE(__half)
#undef PTDP_INSTANTIATE

}  // namespace ptdp::cuda
