// Row-major GEMMs as column-major cuBLASLt calls: a row-major matrix X with row
// stride ld is, read column-major, Xᵀ with leading dimension ld; so row-major
// C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLASLt's
// D (n×m) = op'(B) · op'(A) with the operands swapped and the same flags.
#include "core/kernels/cuda/gemm.h"

#include <stdexcept>

#include "core/kernels/cuda/cuda_check.h"

namespace ptdp::cuda {

namespace {

cudaDataType_t cuda_type(ElemType t) {
  switch (t) {
    case ElemType::bf16: return CUDA_R_16BF;
    case ElemType::f16: return CUDA_R_16F;
    case ElemType::f32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

// Owns the descriptors of one call.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ~Descriptors() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// Column-major layout of a stored matrix: `rows`×`cols`, leading dimension ld, batched.
cublasLtMatrixLayout_t layout(ElemType t, std::int64_t rows, std::int64_t cols, std::int64_t ld, int batch,
                              std::int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  PTDP_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, cuda_type(t), static_cast<std::uint64_t>(rows),
                                               static_cast<std::uint64_t>(cols), ld));
  if (batch > 1) {
    PTDP_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
    PTDP_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return l;
}

void describe(const GemmArgs& g, Descriptors& d) {
  PTDP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Swapped operands: cuBLASLt's A is our B, its B is our A.
  const cublasOperation_t ta = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, tb = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  PTDP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  PTDP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (g.bias != nullptr) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    PTDP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    PTDP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias));
    const cudaDataType_t bias_type = cuda_type(g.ab);
    PTDP_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  // Stored shapes read column-major: our B is k×n (or n×k when transposed) row-major,
  // i.e. n×k (k×n) column-major; our A likewise.
  d.a = g.trans_b ? layout(g.ab, g.k, g.n, g.ldb, g.batch, g.stride_b) : layout(g.ab, g.n, g.k, g.ldb, g.batch, g.stride_b);
  d.b = g.trans_a ? layout(g.ab, g.m, g.k, g.lda, g.batch, g.stride_a) : layout(g.ab, g.k, g.m, g.lda, g.batch, g.stride_a);
  d.c = layout(g.c_type, g.n, g.m, g.ldc, g.batch, g.stride_c);
}

}  // namespace

Gemm::Gemm(cudaStream_t stream, std::size_t workspace_bytes) : stream_(stream), workspace_bytes_(workspace_bytes) {
  PTDP_CUBLAS_CHECK(cublasLtCreate(&handle_));
  PTDP_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

Gemm::~Gemm() {
  cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

void Gemm::run(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return;
  Descriptors d;
  describe(g, d);
  const Key key{g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, static_cast<int>(g.ab),
                static_cast<int>(g.c_type), g.bias != nullptr, g.batch, g.beta != 0};
  auto it = algos_.find(key);
  if (it == algos_.end()) {
    cublasLtMatmulPreference_t pref = nullptr;
    PTDP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    PTDP_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace_bytes_, sizeof workspace_bytes_));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle_, d.op, d.a, d.b, d.c, d.c, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    PTDP_CUBLAS_CHECK(s);
    if (found == 0)
      throw std::runtime_error(where() + ": cuBLASLt has no algorithm for a " + std::to_string(g.m) + "x" +
                               std::to_string(g.n) + "x" + std::to_string(g.k) + " GEMM");
    it = algos_.emplace(key, result.algo).first;
  }
  PTDP_CUBLAS_CHECK(cublasLtMatmul(handle_, d.op, &g.alpha, g.b, d.a, g.a, d.b, &g.beta, g.c, d.c, g.c, d.c,
                                   &it->second, workspace_, workspace_bytes_, stream_));
}

}  // namespace ptdp::cuda
