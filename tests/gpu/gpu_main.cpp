// main() of the GPU tests: GoogleTest with a guard that ends the program after
// a test that left a sticky CUDA error (an illegal address, a launch failure:
// every later CUDA call in the process would fail too), naming that test
// (tests/gtest_break_guard.h), so that scripts/gtest_driver.py resumes the
// rest in a fresh process.
#include <cuda_runtime.h>

#include <string>

#include "tests/gtest_break_guard.h"

namespace {

// A sticky error survives cudaGetLastError(): the device synchronisation
// fails again after the last error was read and cleared. "" when none (or no GPU).
std::string sticky_cuda_error() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    return "";
  }
  if (cudaDeviceSynchronize() == cudaSuccess) return "";
  (void)cudaGetLastError();
  const cudaError_t again = cudaDeviceSynchronize();
  if (again == cudaSuccess) return "";
  return std::string("sticky CUDA error ") + cudaGetErrorName(again) + ": " + cudaGetErrorString(again);
}

}  // namespace

int main(int argc, char** argv) { return ptdp::test::run_guarded_tests(argc, argv, sticky_cuda_error); }
