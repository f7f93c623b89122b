// The fixed-order finishing step of the deterministic column sums (reduce.cuh).
#include <cstdint>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/reduce.cuh"

namespace ptdp::cuda {
namespace {

struct ColumnPartialsConfig {
  static constexpr int kThreads = 256;     // one thread a column
  static constexpr int kMaxBlocks = 4096;  // grid-stride over columns beyond this
};

__global__ void add_column_partials_kernel(const float* partial, std::int64_t slices, std::int64_t cols, float* out) {
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (std::int64_t s = 0; s < slices; ++s) sum += partial[s * cols + c];
    out[c] += sum;
  }
}

}  // namespace

void add_column_partials(const float* partial, std::int64_t slices, std::int64_t cols, float* out, cudaStream_t st) {
  using Cfg = ColumnPartialsConfig;
  if (slices <= 0 || cols <= 0) return;
  add_column_partials_kernel<<<dev::grid_blocks(cols, Cfg::kThreads, Cfg::kMaxBlocks), Cfg::kThreads, 0, st>>>(
      partial, slices, cols, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

}  // namespace ptdp::cuda
