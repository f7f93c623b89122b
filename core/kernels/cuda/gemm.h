// GEMMs through cuBLASLt, in row-major terms (gemm_plan.h): C (m×n) =
// alpha·op(A) (m×k) · op(B) (k×n) + beta·C with an optional epilogue (bias,
// bias+GeLU keeping the pre-activation, GeLU gradient with the bias gradient,
// weight-gradient bias gradient), fp32 accumulation, A and B in 16 bits, C in
// 16 bits or fp32 (weight gradients accumulate in fp32), optionally batched.
// cuBLASLt is told the real alignments of the operands; the algorithm of each
// new call key (GemmKey) is chosen by timing the heuristic's top candidates
// once (or taken from the heuristic when tuning is off) and cached.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <optional>

#include "core/kernels/cuda/gemm_plan.h"

namespace ptdp::cuda {

class Gemm {
 public:
  // tune = false takes the heuristic's first algorithm (reproducible from run to run).
  Gemm(cudaStream_t stream, std::size_t workspace_bytes = 32u << 20, bool tune = true);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // Runs the GEMM; throws when cuBLASLt has no algorithm for it.
  void run(const GemmArgs& g);
  // Runs the GEMM and returns true, or returns false having run nothing when
  // cuBLASLt has no algorithm for it (an epilogue these types or alignments lack).
  bool try_run(const GemmArgs& g);

  std::size_t cached_algorithms() const { return algos_.size(); }
  // Calls whose fused epilogue had no algorithm, so that the caller ran the
  // unfused composition; each new shape among them is said once on stderr.
  std::size_t fallback_runs() const { return fallback_runs_; }
  // Call keys whose algorithm was chosen by timing candidates.
  std::size_t tuned_shapes() const { return tuned_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_;
  bool tune_;
  std::size_t tuned_ = 0;
  std::size_t fallback_runs_ = 0;

  // try_run's "no algorithm": counts and (for a new shape) says an epilogue's fallback; returns false.
  bool declined(const GemmArgs& g, bool fresh);
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  std::map<GemmKey, std::optional<cublasLtMatmulAlgo_t>> algos_;  // nullopt: no algorithm
};

}  // namespace ptdp::cuda
