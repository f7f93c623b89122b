// The GPU-independent half of ptdp's cuBLASLt GEMMs: the arguments of one call
// in row-major terms, the epilogue a linear layer asks for, the alignments
// cuBLASLt is told about, the algorithm-cache key and the choice among timed
// candidates. Pure functions (no CUDA headers), tested on the CPU in
// tests/unit/test_gemm_plan.cpp; gemm_cuda.cpp turns them into cuBLASLt calls.
// Row-major C (m×n) = alpha·op(A) (m×k) · op(B) (k×n) + beta·C.
#pragma once
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace ptdp::cuda {

enum class ElemType { bf16, f16, f32 };
int elem_bytes(ElemType t);

// Work done in the GEMM's epilogue, named in row-major terms (gemm_cuda.cpp
// maps them to cuBLASLt's enumerators after the operand swap).
enum class Epilogue {
  none,
  bias,              // C = A·B + bias (n) on every row
  gelu_aux_bias,     // aux = A·B + bias (pre-activation, kept for backward); C = gelu(aux)
  dgelu,             // C = (A·B) ∘ gelu'(aux)
  dgelu_bgrad,       // the same, and bias_grad (n) = Σ rows of C
  bias_grad_from_a,  // bias_grad (m) = Σ over k of op(A): the bias gradient of dw = dyᵀ·x
};

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
  Epilogue epilogue = Epilogue::none;
  const void* bias = nullptr;  // bias, gelu_aux_bias: n elements of type ab
  void* bias_grad = nullptr;   // dgelu_bgrad (n), bias_grad_from_a (m): overwritten
  ElemType bias_grad_type = ElemType::f32;
  void* aux = nullptr;         // gelu_aux_bias (written), dgelu_bgrad (read): m×n of type c_type
  std::int64_t ld_aux = 0;     // its row stride in elements
  int batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
};

// What is wrong with the epilogue arguments of g ("" when nothing is).
std::string epilogue_error(const GemmArgs& g);

// Largest power of two ≤ 16 that divides the address and the byte strides
// between its rows and batch entries: the alignment every row of the matrix keeps.
int alignment_bytes(std::uintptr_t address, std::int64_t ld_bytes, std::int64_t stride_bytes = 0);

// Everything an algorithm choice depends on: a chosen algorithm is reused only
// for calls that agree on all of it.
struct GemmKey {
  bool trans_a = false, trans_b = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, ld_aux = 0;
  ElemType ab = ElemType::bf16, c_type = ElemType::bf16, bias_grad_type = ElemType::f32;
  Epilogue epilogue = Epilogue::none;
  int batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool alpha_one = true, beta_zero = true;
  int align_a = 16, align_b = 16, align_c = 16, align_aux = 16, align_bias = 16;
  auto operator<=>(const GemmKey&) const = default;
};
GemmKey gemm_key(const GemmArgs& g);

// cuBLASLt's GeLU aux matrix needs a leading dimension divisible by 8; the
// pointer we require 16-byte aligned as well (it is read and written in vectors).
bool gelu_aux_ok(const void* aux, std::int64_t ld_elems, ElemType t);

// Epilogue of a linear layer's GEMM for the fused-operator switch: fused_ops
// puts the bias (and the GeLU, when the aux matrix allows it) into the GEMM;
// unfused runs them as separate kernels, each reading and writing memory.
Epilogue forward_epilogue(bool fused_ops, bool has_bias, bool gelu, bool aux_ok);
// Ways to fuse the GeLU gradient into fc2's data-gradient GEMM dx = dy·w, to
// try best first (none when unfused or the aux matrix does not allow it): the
// bias gradient summed in the epilogue in fp32; else in the 16-bit type for
// bf16 (fp32's range, 8 bits kept); for fp16, whose range a sum over every
// token may overflow, the GeLU gradient alone (the bias gradient by its kernel).
struct DgeluPlan {
  Epilogue epilogue;
  ElemType bias_grad_type;
  bool operator==(const DgeluPlan&) const = default;
};
std::vector<DgeluPlan> dgelu_plans(bool fused_ops, bool aux_ok, ElemType t);
// The weight-gradient GEMM dw += dyᵀ·x.
Epilogue weight_grad_epilogue(bool fused_ops, bool has_bias);

// The epilogue's name as the log and the benchmarks print it ("gelu_aux_bias").
const char* epilogue_name(Epilogue e);
// The one line said when cuBLASLt has no algorithm for g's fused epilogue and
// the caller runs the unfused composition instead: the epilogue, the shape and
// the types, e.g. "cuBLASLt has no gelu_aux_bias algorithm for the bf16
// 8192x9216x2304 GEMM (aux ld 9216): the unfused composition runs instead".
std::string fallback_note(const GemmArgs& g);

// Candidates of cuBLASLt's heuristic timed per new shape.
inline constexpr int kTunedCandidates = 8;
// Index of the fastest candidate; a time that is negative or not finite marks
// a candidate that failed. -1 when all failed (or there are none).
int fastest_candidate(const std::vector<float>& ms);

}  // namespace ptdp::cuda
