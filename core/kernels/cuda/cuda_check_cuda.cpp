// Failure reporting for the CUDA checks.
#include <stdexcept>

#include "core/kernels/cuda/cuda_check.h"

namespace ptdp::cuda {

void fail(const std::string& what, const char* expr, const char* file, int line) {
  // The message travels with the exception; whoever catches it prints it once.
  throw std::runtime_error(where(this_process()) + ": " + expr + " failed at " + file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace ptdp::cuda
