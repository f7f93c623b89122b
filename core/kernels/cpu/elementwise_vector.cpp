// Element-wise ops, fp32 fast paths (see elementwise_vector.h); the formulas
// are the references' (gelu_formula.h; swiglu.cpp's σ with vector_exp).
#include "core/kernels/cpu/elementwise_vector.h"

#include "core/kernels/cpu/gelu_formula.h"
#include "core/kernels/cpu/vector_exp.h"
#include "core/kernels/cpu/vector_lanes.h"

namespace ptdp::cpu {
namespace {

// σ(x) = 1/(1 + e^−x); x < −88: e^−x clamps at e^88 and σ ≈ 6e-39, not 0.
[[gnu::always_inline]] inline float sigmoid(float x) { return 1.0f / (1.0f + vector_exp(-x)); }

}  // namespace

PTDP_VECTOR_CLONES void gelu_forward_vector(const float* x, std::int64_t n, float* y) {
  PTDP_ELEMENTWISE
  for (std::int64_t i = 0; i < n; ++i) y[i] = gelu_formula::value(x[i]);
}

PTDP_VECTOR_CLONES void gelu_backward_vector(const float* dy, const float* x, std::int64_t n, float* dx) {
  PTDP_ELEMENTWISE
  for (std::int64_t i = 0; i < n; ++i) dx[i] = gelu_formula::grad(dy[i], x[i]);
}

PTDP_VECTOR_CLONES void add_vector(const float* a, const float* b, std::int64_t n, float* out) {
  PTDP_ELEMENTWISE
  for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

PTDP_VECTOR_CLONES void scale_vector(float* x, std::int64_t n, float alpha) {
  PTDP_ELEMENTWISE
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

PTDP_VECTOR_CLONES double sum_squares_vector(const float* x, std::int64_t n) {
  return lane_sum(n, [x](std::int64_t i) { return static_cast<double>(x[i]) * static_cast<double>(x[i]); });
}

PTDP_VECTOR_CLONES void bias_add_vector(float* y, const float* bias, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i) {
    float* yi = y + i * cols;
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < cols; ++j) yi[j] += bias[j];
  }
}

PTDP_VECTOR_CLONES void bias_backward_vector(const float* dy, std::int64_t rows, std::int64_t cols, float* dbias) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* dyi = dy + i * cols;
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < cols; ++j) dbias[j] += dyi[j];
  }
}

PTDP_VECTOR_CLONES void swiglu_forward_vector(const float* pre, std::int64_t n, std::int64_t f, float* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* gate = pre + i * 2 * f;
    const float* up = gate + f;
    float* yi = y + i * f;
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < f; ++j) yi[j] = gate[j] * sigmoid(gate[j]) * up[j];
  }
}

// silu'(x) = σ(x)·(1 + x·(1 − σ(x))).
PTDP_VECTOR_CLONES void swiglu_backward_vector(const float* dy, const float* pre, std::int64_t n, std::int64_t f,
                                               float* dpre) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float* gate = pre + i * 2 * f;
    const float* up = gate + f;
    const float* dyi = dy + i * f;
    float* dgate = dpre + i * 2 * f;
    float* dup = dgate + f;
    PTDP_ELEMENTWISE
    for (std::int64_t j = 0; j < f; ++j) {
      const float sg = sigmoid(gate[j]);
      dgate[j] = dyi[j] * up[j] * sg * (1.0f + gate[j] * (1.0f - sg));
      dup[j] = dyi[j] * gate[j] * sg;
    }
  }
}

}  // namespace ptdp::cpu
