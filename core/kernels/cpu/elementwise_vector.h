// Element-wise ops, fp32 fast paths of elementwise.h, bias.h and swiglu.h (same
// arguments, results equal up to rounding): one clone per vector width
// (vector_lanes.h). n elements; rows × cols for the bias ops; f the SwiGLU width.
#pragma once
#include <cstdint>

namespace ptdp::cpu {

void gelu_forward_vector(const float* x, std::int64_t n, float* y);
void gelu_backward_vector(const float* dy, const float* x, std::int64_t n, float* dx);
void add_vector(const float* a, const float* b, std::int64_t n, float* out);
void scale_vector(float* x, std::int64_t n, float alpha);
// Σ x², accumulated in double in 16 lanes.
double sum_squares_vector(const float* x, std::int64_t n);
// y (rows, cols) += bias (cols); dbias (cols) += column sums of dy (rows, cols).
void bias_add_vector(float* y, const float* bias, std::int64_t rows, std::int64_t cols);
void bias_backward_vector(const float* dy, std::int64_t rows, std::int64_t cols, float* dbias);
// pre, dpre (n, 2f): gate then up; y, dy (n, f).
void swiglu_forward_vector(const float* pre, std::int64_t n, std::int64_t f, float* y);
void swiglu_backward_vector(const float* dy, const float* pre, std::int64_t n, std::int64_t f, float* dpre);

}  // namespace ptdp::cpu
