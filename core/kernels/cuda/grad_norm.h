// Deterministic reductions into fp64 for the training step's scalars: the sum
// of squares over many fp32 tensors in one launch (the global gradient norm)
// and the running sum of per-token losses. No floating-point atomics: block
// sums in fp32 (a fixed tree), combined in a fixed order in fp64, so the same
// inputs give the same bits on every run.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace ptdp::cuda {

struct GradNormConfig {
  static constexpr int kThreads = 512;            // one block per chunk
  static constexpr std::int64_t kChunk = 65536;   // elements a block sums in fp32 (128 per thread)
};

// Device tables of one multi-tensor sum of squares: segment i is sizes[i] fp32
// values at ptrs[i]; chunk c covers elements [chunk_start[c], +kChunk) of
// segment chunk_segment[c]. partials (chunks) and arrived (1) are scratch.
struct SumSquaresTable {
  const float* const* ptrs = nullptr;
  const std::int64_t* sizes = nullptr;
  const int* chunk_segment = nullptr;
  const std::int64_t* chunk_start = nullptr;
  int chunks = 0;
  double* partials = nullptr;
  unsigned int* arrived = nullptr;  // blocks done; the last one combines and resets it to 0
};

// Owns the device tables of a list of (device pointer, element count) segments.
// Uploads are queued on `st`; the host copies live as long as the owner.
class SumSquaresTableOwner {
 public:
  SumSquaresTableOwner(const std::vector<std::pair<const float*, std::int64_t>>& segments, cudaStream_t st);
  ~SumSquaresTableOwner();
  SumSquaresTableOwner(const SumSquaresTableOwner&) = delete;
  SumSquaresTableOwner& operator=(const SumSquaresTableOwner&) = delete;
  const SumSquaresTable& table() const { return table_; }

 private:
  SumSquaresTable table_;
  std::vector<const float*> ptrs_;
  std::vector<std::int64_t> sizes_, chunk_start_;
  std::vector<int> chunk_segment_;
  std::vector<void*> device_;  // every allocation, freed by the destructor
};

// *out (fp64, device) = Σ over all segments of x², in one launch.
void sum_squares_multi(const SumSquaresTable& table, double* out, cudaStream_t st);

// *acc (fp64, device) += Σ x (n fp32 values), one block, fixed order.
void accumulate_sum(const float* x, std::int64_t n, double* acc, cudaStream_t st);

}  // namespace ptdp::cuda
