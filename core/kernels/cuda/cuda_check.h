// Always-on checks of CUDA, cuBLAS(Lt), cuDNN (and its frontend) and NCCL return codes: on failure they
// throw std::runtime_error naming the expression, file:line, rank and host
// (where(this_process()), core/topology/process_place.h) and
// the library's own message (the command that catches it prints it and, in a
// multi-rank run, aborts the job). Kept in release builds.
#pragma once
#include <cuda_runtime.h>
#include <cublasLt.h>
#ifdef PTDP_HAVE_CUDNN
#include <cudnn.h>
#endif

#include <string>

#include "core/topology/process_place.h"

namespace ptdp::cuda {

[[noreturn]] void fail(const std::string& what, const char* expr, const char* file, int line);

inline void check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) fail(std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e), expr, file, line);
}
inline void check(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(std::string("cuBLAS status ") + std::to_string(static_cast<int>(s)), expr, file, line);
}

#ifdef PTDP_HAVE_CUDNN
inline void check(cudnnStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUDNN_STATUS_SUCCESS) fail(std::string("cuDNN: ") + cudnnGetErrorString(s), expr, file, line);
}
#endif
// The cuDNN frontend's error_t (is_good(), err_msg), taken as a template so
// that this header need not include the frontend.
template <class FrontendError>
void check_frontend(const FrontendError& e, const char* expr, const char* file, int line) {
  if (!e.is_good()) fail("cuDNN frontend: " + e.err_msg, expr, file, line);
}

}  // namespace ptdp::cuda

#define PTDP_CUDA_CHECK(expr) ::ptdp::cuda::check((expr), #expr, __FILE__, __LINE__)
#define PTDP_CUBLAS_CHECK(expr) ::ptdp::cuda::check((expr), #expr, __FILE__, __LINE__)
#define PTDP_CUDNN_CHECK(expr) ::ptdp::cuda::check((expr), #expr, __FILE__, __LINE__)
#define PTDP_CUDNN_FE_CHECK(expr) ::ptdp::cuda::check_frontend((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: the launch's own error (bad configuration, no device).
#define PTDP_CUDA_CHECK_LAUNCH() ::ptdp::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
