// Parameter initialisation on the device: one thread per element computes the
// Philox/Box-Muller value of its full index (param_init.h) and rounds it to T,
// so a 1.7B-parameter model starts without any per-element host work.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/init.h"

namespace ptdp::cuda {
namespace {

struct InitConfig {
  static constexpr int kThreads = 256;      // 1-D grid-stride kernel
  static constexpr int kMaxBlocks = 8192;   // enough to fill an H100 (fp64 Box-Muller is compute bound)
};

// out (n) = init_element(how, i); `how` is passed by value (kernel parameter space).
template <class T> __global__ void init_param_kernel(ParamInit how, std::int64_t n, T* out) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = dev::from_float<T>(init_element(how, i));
}

}  // namespace

template <class T> void init_param(const ParamInit& how, std::int64_t n, T* out, cudaStream_t st) {
  if (n == 0) return;
  const unsigned blocks = dev::grid_blocks(n, InitConfig::kThreads, InitConfig::kMaxBlocks);
  init_param_kernel<T><<<blocks, InitConfig::kThreads, 0, st>>>(how, n, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

template void init_param<float>(const ParamInit&, std::int64_t, float*, cudaStream_t);
template void init_param<__half>(const ParamInit&, std::int64_t, __half*, cudaStream_t);
template void init_param<__nv_bfloat16>(const ParamInit&, std::int64_t, __nv_bfloat16*, cudaStream_t);

}  // namespace ptdp::cuda
