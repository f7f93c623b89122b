// Every tolerance used by the CPU kernel tests, each with where it comes from.
// A check passes iff |got − ref| ≤ atol + rtol·|ref| for every element.
// Unit roundoff: fp32 u = 2^-24 ≈ 6.0e-8, float64 u = 2^-53 ≈ 1.1e-16.
#pragma once

namespace ptdp::test {

struct Tol {
  double atol;  // absolute part, for references near zero
  double rtol;  // relative part, times |ref|
};

// fp32 kernel vs float64 naive evaluation of the same (float-representable) inputs:
// reductions here are ≤ 16 terms of magnitude ≲ 4, so the worst-case error is
// K·u·Σ|terms| ≈ 16 · 6e-8 · 4 ≈ 4e-6; 1e-5 leaves a factor ~2.5 of margin.
inline constexpr Tol kFwdF32{1e-5, 1e-5};

// Step of the central finite differences (in float64) of the backward tests.
inline constexpr double kFdStep = 1e-6;

// float64 analytic gradient vs float64 central FD with step h = 1e-6: truncation
// h²·|L'''|/6 ≈ 1e-12; rounding, worst case, u64·Σ|terms of L|/h ≈ 1.1e-16 · 4e2 / 1e-6
// ≈ 4e-8 (L sums ≤ 400 products of magnitude ≲ 1). 1e-7 is 2.5× that.
inline constexpr Tol kGradF64{1e-7, 1e-6};

// fp32 analytic gradient vs float64 FD: the FD error (≈1e-8, above) is negligible;
// fp32 rounding dominates: backward chains of ≲ 30 operations (attention sums over s
// and d, layernorm over h) on values ≲ 5 give, worst case, 30 · 6e-8 · 5 ≈ 1e-5.
inline constexpr Tol kGradF32{1e-5, 1e-5};

// fp32 AdamW vs a float64 evaluation of the header formula: ≈ 10 roundings of
// O(1) quantities per element per step, 10 · 6e-8 ≈ 6e-7, two steps ≈ 1.2e-6.
inline constexpr Tol kAdamWF32{2e-6, 2e-6};

// float64 kernel vs float64 formula with the same operations (up to reassociation
// and library pow/exp/log, each ≤ 1 ulp): a few u64 ≈ 1e-15 on O(1) values.
inline constexpr Tol kSameF64{1e-13, 1e-13};

// Two fp32 evaluations that differ only by reassociating a sum of ≤ 10 terms
// (vocabulary-parallel combination vs one shard): ≤ 10 · u · Σ|terms| ≈ 10·6e-8·10 ≈ 6e-6.
inline constexpr Tol kReassocF32{1e-5, 1e-5};

// Two fp32 forwards of one model whose GEMMs are blocked differently (the
// batch as one micro-batch of 128 rows against micro-batches of 16: BLAS
// picks other kernels and sums the K = 64 terms of a row in another order):
// each sum may differ by K·u·Σ|terms| = 64 · 6e-8 ≈ 3.8e-6 of the magnitudes
// summed, and the loss inherits that relative size; 1e-5 is 2.6× it. Seen on
// OpenBLAS's SkylakeX kernels: 1.5e-6.
inline constexpr double kReblockF32Rel = 1e-5;

// An fp32 fast path (core/kernels/cpu/*_vector.cpp, *_blas.cpp) vs the float64
// reference kernel on the same inputs. Lane sums over n ≤ 256 terms add n/16
// terms a lane then 16 lanes: (n/16 + 16)·u·Σ|terms| ≤ 32 · 6e-8 · Σ|terms|; with
// Σ|terms| ≲ 4 (unit-scale data, normalised by n) that is 7.7e-6. BLAS attention
// sums ≤ 160 products a dot (order unknown): 160 · 6e-8 · Σ|p·v| (Σp = 1,
// |v| ≲ 2 at σ = 0.5) ≈ 1.9e-5, and dS adds a second such sum. 4e-5 covers both.
inline constexpr Tol kFastF32{4e-5, 4e-5};

}  // namespace ptdp::test
