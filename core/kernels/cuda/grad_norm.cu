// Multi-tensor sum of squares (the global gradient norm) and the loss
// accumulator, CUDA (see grad_norm.h); CPU references: cpu::sum_squares per
// tensor summed in double, and a double sum of the values in order.
#include <algorithm>
#include <climits>
#include <stdexcept>

#include "core/kernels/cuda/cuda_check.h"
#include "core/kernels/cuda/device_math.cuh"
#include "core/kernels/cuda/device_table.h"
#include "core/kernels/cuda/grad_norm.h"

namespace ptdp::cuda {
namespace {

using Cfg = GradNormConfig;

// Every thread of a block of kThreads gets the fp64 sum over the block, by a
// fixed tree (same order on every run).
__device__ double block_sum_f64(double v) {
  __shared__ double part[Cfg::kThreads];
  const int t = static_cast<int>(threadIdx.x);
  part[t] = v;
  __syncthreads();
  for (int stride = Cfg::kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) part[t] += part[t + stride];
    __syncthreads();
  }
  const double total = part[0];
  __syncthreads();
  return total;
}

// Block c sums the squares of its chunk in fp32 and stores the partial; the
// last block to arrive adds the partials in chunk order (fp64) and writes *out.
__global__ void sum_squares_multi_kernel(SumSquaresTable t, double* out) {
  const int c = static_cast<int>(blockIdx.x);
  const int seg = t.chunk_segment[c];
  const std::int64_t start = t.chunk_start[c];
  const std::int64_t end = min(start + Cfg::kChunk, t.sizes[seg]);
  const float* x = t.ptrs[seg];
  float acc = 0.0f;
  for (std::int64_t j = start + threadIdx.x; j < end; j += Cfg::kThreads) acc += x[j] * x[j];
  const float block = dev::block_sum<Cfg::kThreads>(acc);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    t.partials[c] = static_cast<double>(block);
    __threadfence();  // the partial is visible device-wide before the arrival is counted
    last = atomicAdd(t.arrived, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double sum = 0.0;
  for (int i = static_cast<int>(threadIdx.x); i < t.chunks; i += Cfg::kThreads) sum += __ldcg(&t.partials[i]);
  sum = block_sum_f64(sum);
  if (threadIdx.x == 0) {
    *out = sum;
    *t.arrived = 0;  // ready for the next launch on the same table
  }
}

__global__ void accumulate_sum_kernel(const float* x, std::int64_t n, double* acc) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += Cfg::kThreads) sum += static_cast<double>(x[i]);
  sum = block_sum_f64(sum);
  if (threadIdx.x == 0) *acc += sum;
}

}  // namespace

void sum_squares_multi(const SumSquaresTable& table, double* out, cudaStream_t st) {
  if (table.chunks <= 0) {
    PTDP_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), st));
    return;
  }
  sum_squares_multi_kernel<<<static_cast<unsigned>(table.chunks), Cfg::kThreads, 0, st>>>(table, out);
  PTDP_CUDA_CHECK_LAUNCH();
}

void accumulate_sum(const float* x, std::int64_t n, double* acc, cudaStream_t st) {
  if (n <= 0) return;
  accumulate_sum_kernel<<<1, Cfg::kThreads, 0, st>>>(x, n, acc);
  PTDP_CUDA_CHECK_LAUNCH();
}

// --- SumSquaresTableOwner --------------------------------------------------------------

SumSquaresTableOwner::SumSquaresTableOwner(const std::vector<std::pair<const float*, std::int64_t>>& segments,
                                           cudaStream_t st) {
  for (std::size_t i = 0; i < segments.size(); ++i) {
    ptrs_.push_back(segments[i].first);
    sizes_.push_back(segments[i].second);
    for (std::int64_t start = 0; start < segments[i].second; start += Cfg::kChunk) {
      chunk_segment_.push_back(static_cast<int>(i));
      chunk_start_.push_back(start);
    }
  }
  if (segments.size() > static_cast<std::size_t>(INT_MAX) || chunk_segment_.size() > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("SumSquaresTableOwner: more than 2^31 tensors or chunks");
  try {
    table_.ptrs = upload_table(ptrs_, device_, st);
    table_.sizes = upload_table(sizes_, device_, st);
    table_.chunk_segment = upload_table(chunk_segment_, device_, st);
    table_.chunk_start = upload_table(chunk_start_, device_, st);
    table_.chunks = static_cast<int>(chunk_segment_.size());
    const std::size_t scratch = std::max<std::size_t>(chunk_segment_.size(), 1) * sizeof(double) + sizeof(double);
    void* p = nullptr;
    PTDP_CUDA_CHECK(cudaMalloc(&p, scratch));
    device_.push_back(p);
    table_.partials = static_cast<double*>(p);
    table_.arrived = reinterpret_cast<unsigned int*>(static_cast<char*>(p) + scratch - sizeof(double));
    PTDP_CUDA_CHECK(cudaMemsetAsync(table_.arrived, 0, sizeof(unsigned int), st));
  } catch (...) {
    for (void* q : device_) cudaFree(q);
    throw;
  }
}

// cudaFree waits for the device, so queued launches reading the tables finish first.
SumSquaresTableOwner::~SumSquaresTableOwner() {
  for (void* p : device_) cudaFree(p);
}

}  // namespace ptdp::cuda
