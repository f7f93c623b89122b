// Row-major GEMMs as column-major cuBLASLt calls: a row-major matrix X with row
// stride ld is, read column-major, Xᵀ with leading dimension ld; so row-major
// C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLASLt's
// D (n×m) = op'(B) · op'(A) with the operands swapped and the same flags.
// Consequences for the epilogues: a row-major per-column vector (length n) is
// per-row of cuBLASLt's D (its bias length is "rows of D"); the bias gradient
// of dw = dyᵀ·x sums dy — our A — over the GEMM's k, which is cuBLASLt's B
// after the swap, hence CUBLASLT_EPILOGUE_BGRADB (length "columns of D" = our m).
#include "core/kernels/cuda/gemm.h"

#include <cstdio>
#include <stdexcept>
#include <vector>

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

cublasLtEpilogue_t cublaslt_epilogue(Epilogue e) {
  switch (e) {
    case Epilogue::none: return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilogue::bias: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::gelu_aux_bias: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case Epilogue::dgelu: return CUBLASLT_EPILOGUE_DGELU;
    case Epilogue::dgelu_bgrad: return CUBLASLT_EPILOGUE_DGELU_BGRAD;
    case Epilogue::bias_grad_from_a: return CUBLASLT_EPILOGUE_BGRADB;  // our A is cuBLASLt's B
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
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

template <class V> void set(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const V& value) {
  PTDP_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, attr, &value, sizeof value));
}

// Epilogue attributes. Bias vectors are of the input type; bias gradients of
// the type asked for (cuBLASLt's documented default is D's; another type the
// heuristic may refuse, and the caller tries the next plan), written, not accumulated.
void describe_epilogue(const GemmArgs& g, cublasLtMatmulDesc_t op) {
  if (g.epilogue == Epilogue::none) return;
  set(op, CUBLASLT_MATMUL_DESC_EPILOGUE, cublaslt_epilogue(g.epilogue));
  if (const void* vec = g.bias ? g.bias : g.bias_grad) {
    set(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, vec);
    set(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type(g.bias ? g.ab : g.bias_grad_type));
  }
  if (g.aux != nullptr) {
    set(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, g.aux);
    set(op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, g.ld_aux);  // the aux matrix is n×m column-major, as D
  }
}

void describe(const GemmArgs& g, Descriptors& d) {
  PTDP_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Swapped operands: cuBLASLt's A is our B, its B is our A.
  set(d.op, CUBLASLT_MATMUL_DESC_TRANSA, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  set(d.op, CUBLASLT_MATMUL_DESC_TRANSB, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  describe_epilogue(g, d.op);
  // Stored shapes read column-major: our B is k×n (or n×k when transposed) row-major,
  // i.e. n×k (k×n) column-major; our A likewise.
  d.a = g.trans_b ? layout(g.ab, g.k, g.n, g.ldb, g.batch, g.stride_b) : layout(g.ab, g.n, g.k, g.ldb, g.batch, g.stride_b);
  d.b = g.trans_a ? layout(g.ab, g.m, g.k, g.lda, g.batch, g.stride_a) : layout(g.ab, g.k, g.m, g.lda, g.batch, g.stride_a);
  d.c = layout(g.c_type, g.n, g.m, g.ldc, g.batch, g.stride_c);
}

// One described GEMM, runnable with any algorithm into any D of C's layout.
struct MatmulCall {
  cublasLtHandle_t handle;
  const Descriptors& d;
  const GemmArgs& g;
  void* workspace;
  std::size_t workspace_bytes;
  cudaStream_t stream;
  cublasStatus_t launch(const cublasLtMatmulAlgo_t& algo, void* out) const {
    return cublasLtMatmul(handle, d.op, &g.alpha, g.b, d.a, g.a, d.b, &g.beta, g.c, d.c, out, d.c, &algo, workspace,
                          workspace_bytes, stream);
  }
};

// Heuristic candidates for the call, best first (none when cuBLASLt supports no algorithm).
std::vector<cublasLtMatmulHeuristicResult_t> candidates(const MatmulCall& call, const GemmKey& key, int wanted) {
  cublasLtMatmulPreference_t pref = nullptr;
  PTDP_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const auto set_pref = [&](cublasLtMatmulPreferenceAttributes_t attr, const auto& v) {
    return cublasLtMatmulPreferenceSetAttribute(pref, attr, &v, sizeof v);
  };
  // cuBLASLt's A is our B and its B our A (operand swap); C and D are our C.
  const auto u32 = [](int v) { return static_cast<std::uint32_t>(v); };
  cublasStatus_t s = set_pref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, call.workspace_bytes);
  if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, u32(key.align_b));
  if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, u32(key.align_a));
  if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, u32(key.align_c));
  if (s == CUBLAS_STATUS_SUCCESS) s = set_pref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, u32(key.align_c));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(wanted));
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(call.handle, call.d.op, call.d.a, call.d.b, call.d.c, call.d.c, pref, wanted,
                                       results.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) found = 0;
  else PTDP_CUBLAS_CHECK(s);
  results.resize(static_cast<std::size_t>(found));
  return results;
}

// Mean milliseconds of one run of `algo` into `out` (a few warm runs first),
// or -1 when cuBLASLt refuses to run it.
float time_candidate(const MatmulCall& call, const cublasLtMatmulAlgo_t& algo, void* out, cudaEvent_t start,
                     cudaEvent_t stop) {
  constexpr int kWarmRuns = 2, kTimedRuns = 3;
  for (int i = 0; i < kWarmRuns; ++i)
    if (call.launch(algo, out) != CUBLAS_STATUS_SUCCESS) return -1;
  PTDP_CUDA_CHECK(cudaEventRecord(start, call.stream));
  for (int i = 0; i < kTimedRuns; ++i)
    if (call.launch(algo, out) != CUBLAS_STATUS_SUCCESS) return -1;
  PTDP_CUDA_CHECK(cudaEventRecord(stop, call.stream));
  PTDP_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  PTDP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms / kTimedRuns;
}

// Bytes of C as stored (row-major m×n with row stride ldc, batched).
std::size_t c_bytes(const GemmArgs& g) {
  const std::int64_t elems = (g.batch - 1) * g.stride_c + (g.m - 1) * g.ldc + g.n;
  return static_cast<std::size_t>(elems) * static_cast<std::size_t>(elem_bytes(g.c_type));
}

}  // namespace

Gemm::Gemm(cudaStream_t stream, std::size_t workspace_bytes, bool tune)
    : stream_(stream), workspace_bytes_(workspace_bytes), tune_(tune) {
  PTDP_CUBLAS_CHECK(cublasLtCreate(&handle_));
  PTDP_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
  PTDP_CUDA_CHECK(cudaEventCreate(&start_));
  PTDP_CUDA_CHECK(cudaEventCreate(&stop_));
}

Gemm::~Gemm() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

void Gemm::run(const GemmArgs& g) {
  if (!try_run(g))
    throw std::runtime_error(where(this_process()) + ": cuBLASLt has no algorithm for a " + std::to_string(g.m) + "x" +
                             std::to_string(g.n) + "x" + std::to_string(g.k) + " GEMM");
}

bool Gemm::declined(const GemmArgs& g, bool fresh) {
  if (g.epilogue == Epilogue::none) return false;  // run() throws: there is nothing to fall back to
  ++fallback_runs_;
  if (fresh) std::fprintf(stderr, "%s: %s (said once per shape)\n", where(this_process()).c_str(), fallback_note(g).c_str());
  return false;
}

bool Gemm::try_run(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return true;
  if (const std::string e = epilogue_error(g); !e.empty()) throw std::invalid_argument(where(this_process()) + ": GEMM: " + e);
  Descriptors d;
  describe(g, d);
  const MatmulCall call{handle_, d, g, workspace_, workspace_bytes_, stream_};
  const GemmKey key = gemm_key(g);
  auto it = algos_.find(key);
  const bool fresh = it == algos_.end();
  if (fresh) {
    const auto found = candidates(call, key, tune_ ? kTunedCandidates : 1);
    std::optional<cublasLtMatmulAlgo_t> choice;
    if (found.size() == 1) choice = found[0].algo;
    if (found.size() > 1) {  // time each into a scratch D: C (beta ≠ 0) and the caller's output stay untouched
      void* scratch = nullptr;
      PTDP_CUDA_CHECK(cudaMallocAsync(&scratch, c_bytes(g), stream_));
      std::vector<float> ms;
      for (const auto& r : found) ms.push_back(time_candidate(call, r.algo, scratch, start_, stop_));
      PTDP_CUDA_CHECK(cudaFreeAsync(scratch, stream_));
      const int best = fastest_candidate(ms);
      if (best >= 0) choice = found[static_cast<std::size_t>(best)].algo;
      ++tuned_;
    }
    it = algos_.emplace(key, choice).first;
  }
  if (!it->second) return declined(g, fresh);
  const cublasStatus_t status = call.launch(*it->second, g.c);
  if (status != CUBLAS_STATUS_SUCCESS && fresh) {  // an untimed choice cuBLASLt refuses to run: none for this key
    it->second.reset();
    return declined(g, fresh);
  }
  PTDP_CUBLAS_CHECK(status);
  return true;
}

}  // namespace ptdp::cuda
