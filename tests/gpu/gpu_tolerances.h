// Every tolerance of the GPU tests, with where it comes from. u16 is the unit
// roundoff of the 16-bit type (bf16: 2^-8 ≈ 3.9e-3, fp16: 2^-11 ≈ 4.9e-4);
// kernels accumulate in fp32, so the error is the output rounding (u16) plus
// the input rounding propagated through a length-K reduction (~u16·sqrt(K) for
// random signs).
#pragma once
#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ptdp::gputest {

struct Tolerance {
  double atol, rtol;
};

template <class T> constexpr double unit_roundoff();
template <> constexpr double unit_roundoff<__nv_bfloat16>() { return 0x1.0p-8; }
template <> constexpr double unit_roundoff<__half>() { return 0x1.0p-11; }
template <> constexpr double unit_roundoff<float>() { return 0x1.0p-24; }

// Element-wise kernels (GeLU, add, casts): one rounding of the output.
template <class T> Tolerance elementwise() { return {2 * unit_roundoff<T>(), 2 * unit_roundoff<T>()}; }
// A reduction of length k over 16-bit inputs rounded once (layernorm, softmax,
// GEMM with fp32 accumulation): u16·(1 + sqrt(k)), with a floor for near-zero outputs.
template <class T> Tolerance reduction(double k) {
  const double u = unit_roundoff<T>() * (1 + std::sqrt(k));
  return {u, u};
}
// fp32 results of fp32 math on 16-bit inputs (statistics, fp32 gradients of a
// length-k sum): fp32 accumulation error ~1e-6·sqrt(k) on top of exact inputs.
inline Tolerance fp32_reduction(double k) { return {1e-5 * (1 + std::sqrt(k)), 1e-5 * (1 + std::sqrt(k))}; }

// A sum of non-negative fp32 terms (sums of squares) by a thread's sequential
// sum of `per_thread` terms, then a tree of `levels` levels: each addition
// rounds once, so |error| ≤ (per_thread + levels + 1)·u32·sum (the +1: x² rounded).
inline Tolerance fp32_nonnegative_sum(double per_thread, double levels) {
  const double r = (per_thread + levels + 1) * unit_roundoff<float>();
  return {1e-30, r};
}

// Whole-model gradients (test_model_gradients.cpp: one step of a small GPT,
// bf16 on the GPU against fp32 on the CPU from the same Philox weights). Every
// gradient element is a reduction of products whose factors were each rounded
// to bf16 (weights once, activations after every op, forward and back): a
// length-K reduction of terms of size ~g/sqrt(K) (random signs) carries an
// error ~u16·sqrt(K) times the terms' scale. Errors are measured relative to
// the gradient's scale, its largest |element| over the tensor (`scale`), so
// elements near zero are held to the tensor's scale, not their own; K is the
// longest reduction of the model (max of n = b·s tokens, h, the MLP's f, V'/t).
// A wrong kernel (a transposed GEMM, a missed shard offset) is off by the
// gradient's own size, several times this bound.
template <class T> Tolerance model_gradient(double k, double scale) {
  const double r = unit_roundoff<T>() * (1 + std::sqrt(k));
  return {r * scale, r};
}
// The same bound on the whole tensor: ‖gpu − cpu‖₂ / ‖cpu‖₂ ≤ u16·(1 + sqrt(K)).
template <class T> double model_gradient_norm(double k) { return unit_roundoff<T>() * (1 + std::sqrt(k)); }

// Softmax probabilities and the softmax backward, from inputs exact in T,
// computed in fp32 and rounded once to T: one output rounding, relative (a
// 1-ulp flip where GPU and CPU fp32 values straddle a rounding boundary is at
// most 2·u16·|ref|); the fp32 max, sums and dot products over s ≤ a few
// thousand add ~1e-7·sqrt(s) relative, and in the backward p·(dp − Σ dp·p)
// ~1e-7·sqrt(s)·p absolute: the floor 1e-5 (also above fp16's subnormal ulp).
// No sqrt(s) growth: a kernel writing zeros for probabilities ~1/s fails.
template <class T> Tolerance softmax() { return {1e-5, 2 * unit_roundoff<T>()}; }
// Attention out (b, s, a, d) = P·V, a length-s reduction whose input P (the
// softmax of fp32 scores) is rounded to T first (cuDNN feeds P to its second
// tensor-core GEMM in T; the unfused path stores P in T). The unfused path
// also stores the scores in T before the softmax: |score| ≲ 4 for N(0,1)
// inputs, a relative error ≲ 4·u16 in each p, the order of P's own rounding.
// Two roundings into one length-s reduction: reduction(2s).
template <class T> Tolerance attention_out(double s) { return reduction<T>(2 * s); }
// Attention dq, dk, dv: dV = Pᵀ·dO, dQ = dS·K/sqrt(d) and dK = dSᵀ·Q/sqrt(d) are
// length-s reductions over intermediates rounded to T (P; dS = P∘(dP − D)),
// and dS carries dP = dO·Vᵀ and D = rowsum(dO∘O), length-d reductions with O
// rounded to T. u16·(1 + sqrt(4(s + d))) ≥ u16·(1 + √2·(√s + √d)): a length-s and
// a length-d rounding with room for the second rounded intermediate.
template <class T> Tolerance attention_grad(double s, double head_dim) { return reduction<T>(4 * (s + head_dim)); }
// Grouped-query attention dk, dv: kv head j gathers the r = a/g query heads it
// serves, a reduction over r·s terms in place of s: attention_grad(r·s, d).
template <class T> Tolerance attention_kv_grad(double s, double head_dim, double r) {
  return attention_grad<T>(r * s, head_dim);
}
// cuDNN's softmax statistics (fp32 log-sum-exp of the scaled scores) against a
// double reference: fp32 dot products of length d, then an fp32 sum of s terms.
inline Tolerance attention_stats(double s, double head_dim) { return fp32_reduction(s + head_dim); }

// RoPE (in place, x1·cos − x2·sin): fp32 math on exact inputs rounded once to
// T (elementwise), plus the angle p·theta^(-2j/d) for p < s taken in fp32 on the
// device (a few ulps of an angle up to s: ≤ 4·s·u32 rad) against the
// reference's, times |x| ≤ 8 for N(0, 1) inputs: atol 32·s·u32. A wrong pair,
// sign or position is off by |x|, far above it.
template <class T> Tolerance rope(double s) {
  const double e = 2 * unit_roundoff<T>();
  return {e + 32 * s * unit_roundoff<float>(), e};
}

}  // namespace ptdp::gputest
