// Failure reporting for the CUDA checks.
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "core/kernels/cuda/cuda_check.h"

namespace ptdp::cuda {

std::string where() {
  const char* rank = nullptr;
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if ((rank = std::getenv(var)) != nullptr) break;
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  return std::string("rank ") + (rank ? rank : "0") + " (" + host + ")";
}

void fail(const std::string& what, const char* expr, const char* file, int line) {
  // The message travels with the exception; whoever catches it prints it once.
  throw std::runtime_error(where() + ": " + expr + " failed at " + file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace ptdp::cuda
