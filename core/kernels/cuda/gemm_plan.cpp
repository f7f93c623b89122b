// GPU-independent GEMM planning (see gemm_plan.h).
#include "core/kernels/cuda/gemm_plan.h"

#include <cmath>

namespace ptdp::cuda {

int elem_bytes(ElemType t) { return t == ElemType::f32 ? 4 : 2; }

std::string epilogue_error(const GemmArgs& g) {
  const bool wants_bias = g.epilogue == Epilogue::bias || g.epilogue == Epilogue::gelu_aux_bias;
  const bool wants_grad = g.epilogue == Epilogue::dgelu_bgrad || g.epilogue == Epilogue::bias_grad_from_a;
  const bool wants_aux =
      g.epilogue == Epilogue::gelu_aux_bias || g.epilogue == Epilogue::dgelu || g.epilogue == Epilogue::dgelu_bgrad;
  if (wants_bias != (g.bias != nullptr)) return wants_bias ? "epilogue needs a bias" : "bias given without a bias epilogue";
  if (wants_grad != (g.bias_grad != nullptr))
    return wants_grad ? "epilogue needs a bias-gradient output" : "bias-gradient output given without a bias-gradient epilogue";
  if (wants_aux != (g.aux != nullptr)) return wants_aux ? "epilogue needs the GeLU aux matrix" : "aux matrix given without a GeLU epilogue";
  if (wants_aux && (g.ld_aux < g.n || g.ld_aux % 8 != 0))
    return "GeLU aux leading dimension " + std::to_string(g.ld_aux) + " must be a multiple of 8 and at least n = " +
           std::to_string(g.n);
  if (g.epilogue != Epilogue::none && g.batch != 1) return "epilogues are not supported on batched GEMMs";
  return "";
}

int alignment_bytes(std::uintptr_t address, std::int64_t ld_bytes, std::int64_t stride_bytes) {
  const std::uint64_t bits = static_cast<std::uint64_t>(address) | static_cast<std::uint64_t>(ld_bytes) |
                             static_cast<std::uint64_t>(stride_bytes) | 16u;
  return static_cast<int>(bits & (~bits + 1));  // lowest set bit
}

GemmKey gemm_key(const GemmArgs& g) {
  const std::int64_t ab = elem_bytes(g.ab), cb = elem_bytes(g.c_type);
  const auto addr = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  GemmKey key;
  key.trans_a = g.trans_a, key.trans_b = g.trans_b;
  key.m = g.m, key.n = g.n, key.k = g.k, key.lda = g.lda, key.ldb = g.ldb, key.ldc = g.ldc, key.ld_aux = g.ld_aux;
  key.ab = g.ab, key.c_type = g.c_type, key.epilogue = g.epilogue, key.batch = g.batch;
  if (g.bias_grad != nullptr) key.bias_grad_type = g.bias_grad_type;
  const bool batched = g.batch > 1;
  key.stride_a = batched ? g.stride_a : 0, key.stride_b = batched ? g.stride_b : 0;
  key.stride_c = batched ? g.stride_c : 0;
  key.alpha_one = g.alpha == 1.0f, key.beta_zero = g.beta == 0.0f;
  key.align_a = alignment_bytes(addr(g.a), g.lda * ab, key.stride_a * ab);
  key.align_b = alignment_bytes(addr(g.b), g.ldb * ab, key.stride_b * ab);
  key.align_c = alignment_bytes(addr(g.c), g.ldc * cb, key.stride_c * cb);
  key.align_aux = g.aux ? alignment_bytes(addr(g.aux), g.ld_aux * cb) : 16;
  const void* vec = g.bias ? g.bias : g.bias_grad;
  key.align_bias = vec ? alignment_bytes(addr(vec), 0) : 16;
  return key;
}

bool gelu_aux_ok(const void* aux, std::int64_t ld_elems, ElemType t) {
  return ld_elems % 8 == 0 && alignment_bytes(reinterpret_cast<std::uintptr_t>(aux), ld_elems * elem_bytes(t)) == 16;
}

Epilogue forward_epilogue(bool fused_ops, bool has_bias, bool gelu, bool aux_ok) {
  if (!fused_ops || !has_bias) return Epilogue::none;
  return gelu && aux_ok ? Epilogue::gelu_aux_bias : Epilogue::bias;
}

std::vector<DgeluPlan> dgelu_plans(bool fused_ops, bool aux_ok, ElemType t) {
  if (!fused_ops || !aux_ok) return {};
  if (t == ElemType::f16) return {{Epilogue::dgelu_bgrad, ElemType::f32}, {Epilogue::dgelu, ElemType::f32}};
  return {{Epilogue::dgelu_bgrad, ElemType::f32}, {Epilogue::dgelu_bgrad, t}};
}

Epilogue weight_grad_epilogue(bool fused_ops, bool has_bias) {
  return fused_ops && has_bias ? Epilogue::bias_grad_from_a : Epilogue::none;
}

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::none: return "none";
    case Epilogue::bias: return "bias";
    case Epilogue::gelu_aux_bias: return "gelu_aux_bias";
    case Epilogue::dgelu: return "dgelu";
    case Epilogue::dgelu_bgrad: return "dgelu_bgrad";
    case Epilogue::bias_grad_from_a: return "bias_grad_from_a";
  }
  return "?";
}

std::string fallback_note(const GemmArgs& g) {
  const auto type = [](ElemType t) { return t == ElemType::bf16 ? "bf16" : t == ElemType::f16 ? "fp16" : "fp32"; };
  std::string s = std::string("cuBLASLt has no ") + epilogue_name(g.epilogue) + " algorithm for the " + type(g.ab) +
                  (g.c_type != g.ab ? std::string("->") + type(g.c_type) : std::string()) + " " + std::to_string(g.m) +
                  "x" + std::to_string(g.n) + "x" + std::to_string(g.k) + " GEMM";
  if (g.aux != nullptr) s += " (aux ld " + std::to_string(g.ld_aux) + ")";
  return s + ": the unfused composition runs instead";
}

int fastest_candidate(const std::vector<float>& ms) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(ms.size()); ++i) {
    const float t = ms[static_cast<std::size_t>(i)];
    if (!std::isfinite(t) || t < 0) continue;
    if (best < 0 || t < ms[static_cast<std::size_t>(best)]) best = i;
  }
  return best;
}

}  // namespace ptdp::cuda
