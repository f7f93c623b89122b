// The GPU of a rank and what to record about it.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/cuda_ops.h"

namespace ptdp {

namespace {
std::string version_text(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
}  // namespace

int select_cuda_device(int local_rank) {
  int count = 0;
  PTDP_CUDA_CHECK(cudaGetDeviceCount(&count));
  const int device = local_rank % count;
  PTDP_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

std::int64_t cuda_device_memory_bytes(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 0;
  cudaDeviceProp prop{};
  PTDP_CUDA_CHECK(cudaGetDeviceProperties(&prop, local_rank % count));
  return static_cast<std::int64_t>(prop.totalGlobalMem);
}

std::string cuda_device_name(int local_rank) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "";
  cudaDeviceProp prop{};
  PTDP_CUDA_CHECK(cudaGetDeviceProperties(&prop, local_rank % count));
  return prop.name;
}

CudaDeviceInfo cuda_device_info() {
  CudaDeviceInfo info;
  PTDP_CUDA_CHECK(cudaGetDeviceCount(&info.devices));
  PTDP_CUDA_CHECK(cudaGetDevice(&info.device));
  cudaDeviceProp prop{};
  PTDP_CUDA_CHECK(cudaGetDeviceProperties(&prop, info.device));
  info.name = prop.name;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  info.driver = version_text(driver);
  info.runtime = version_text(runtime);
  const std::size_t lt = cublasLtGetVersion();  // e.g. 130001
  info.cublaslt = std::to_string(lt / 10000) + "." + std::to_string((lt / 100) % 100) + "." + std::to_string(lt % 100);
  return info;
}

}  // namespace ptdp
