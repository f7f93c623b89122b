// GEMMs through cuBLASLt, in row-major terms: C (m×n) = alpha·op(A) (m×k) ·
// op(B) (k×n) + beta·C (+ bias (n) on every row, fused as an epilogue), fp32
// accumulation, A and B in 16 bits, C in 16 bits or fp32 (weight gradients
// accumulate in fp32), optionally batched with strides. The algorithm of each
// shape is chosen once by cuBLASLt's heuristic and cached.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <tuple>

namespace ptdp::cuda {

enum class ElemType { bf16, f16, f32 };

struct GemmArgs {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  std::int64_t lda = 0;  // row stride of A as stored
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  ElemType ab = ElemType::bf16, c_type = ElemType::bf16;
  float alpha = 1, beta = 0;
  const void* bias = nullptr;  // n elements of type ab, or null
  int batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
};

class Gemm {
 public:
  Gemm(cudaStream_t stream, std::size_t workspace_bytes = 32u << 20);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  void run(const GemmArgs& g);
  std::size_t cached_algorithms() const { return algos_.size(); }

 private:
  using Key = std::tuple<bool, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, int, int, bool, int, bool>;
  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_;
  std::map<Key, cublasLtMatmulAlgo_t> algos_;
};

}  // namespace ptdp::cuda
