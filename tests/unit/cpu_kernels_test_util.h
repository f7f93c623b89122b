// Helpers for the CPU kernel tests: seeded random data, the element-wise check
// |got − ref| ≤ atol + rtol·|ref| (reporting the worst element), and float64
// central finite differences.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tolerances.h"

namespace ptdp::test {

// n values ~ N(mean, sigma²), rounded to float so float and double copies are equal.
inline std::vector<double> randn(std::mt19937& rng, std::size_t n, double sigma = 1.0,
                                 double mean = 0.0) {
  std::normal_distribution<double> dist(mean, sigma);
  std::vector<double> out(n);
  for (auto& v : out) v = static_cast<double>(static_cast<float>(dist(rng)));
  return out;
}

// Element-wise conversion, e.g. float64 test data to the kernel's type and back.
template <class T, class U>
std::vector<T> cast(const std::vector<U>& v) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  return out;
}

// Σ a[i]·b[i] in double.
template <class T>
double dot(const std::vector<T>& a, const std::vector<double>& b) {
  double acc = 0;
  for (std::size_t i = 0; i < a.size(); ++i) acc += static_cast<double>(a[i]) * b[i];
  return acc;
}

inline std::vector<double> plus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

// Passes iff |got − ref| ≤ atol + rtol·|ref| everywhere; else one failure naming the
// worst element (largest error relative to its allowance), its index, got and ref.
// The failure is reported at the caller's line: __builtin_FILE/LINE as default
// arguments, which GCC and clang both evaluate at the call (std::source_location
// needs clang 15 with libstdc++; the sanitizer build uses clang 14).
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& ref, Tol tol,
                  const std::string& what, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (got.size() != ref.size()) {
    ADD_FAILURE_AT(file, line)
        << what << ": size " << got.size() << " vs reference " << ref.size();
    return;
  }
  std::size_t worst = 0, bad = 0;
  double worst_ratio = -1;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - ref[i]);
    const double allowed = tol.atol + tol.rtol * std::abs(ref[i]);
    const double ratio = std::isnan(err) ? INFINITY : err / allowed;
    if (ratio > 1) ++bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  if (bad == 0) return;
  std::ostringstream msg;
  msg.precision(10);
  msg << what << ": " << bad << " of " << got.size() << " elements out of tolerance (atol "
      << tol.atol << ", rtol " << tol.rtol << "); worst at index " << worst << ": got "
      << static_cast<double>(got[worst]) << ", ref " << ref[worst] << ", |diff| "
      << std::abs(static_cast<double>(got[worst]) - ref[worst]);
  ADD_FAILURE_AT(file, line) << msg.str();
}

// A type tag for generic lambdas.
template <class T>
struct Type {
  using type = T;
};

// Runs check(Type<T>{}, tolerance, name) for the float and the double instantiation.
template <class F>
void for_float_and_double(F&& check) {
  check(Type<float>{}, kGradF32, std::string(" (float)"));
  check(Type<double>{}, kGradF64, std::string(" (double)"));
}

// dL/dx by central differences, L re-evaluated by `loss` after perturbing x in place
// (x is restored). Used with float64 kernels only.
inline std::vector<double> fd_grad(std::vector<double>& x, const std::function<double()>& loss,
                                   double step = kFdStep) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double saved = x[i];
    x[i] = saved + step;
    const double up = loss();
    x[i] = saved - step;
    const double down = loss();
    x[i] = saved;
    g[i] = (up - down) / (2 * step);
  }
  return g;
}

}  // namespace ptdp::test
