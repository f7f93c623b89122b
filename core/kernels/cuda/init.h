// Launcher of the parameter-initialisation kernel (init.cu): fills a shard on
// the device with the values of param_init.h, the same function the CPU uses.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/tensor/param_init.h"

namespace ptdp::cuda {

// out (n) = init_element(how, i) rounded to T, for T = float, __half, __nv_bfloat16.
template <class T> void init_param(const ParamInit& how, std::int64_t n, T* out, cudaStream_t st);

}  // namespace ptdp::cuda
