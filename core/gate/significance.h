// Is NEW slower than BASE, or is the difference noise? A one-sided
// Mann–Whitney U (Wilcoxon rank-sum) test on two sets of iteration times,
// and the spread of one set (quartiles, Tukey's upper fence): what `ptdp
// compare` gates on (compare.h says how the two combine).
//
// Why this test: it needs no assumption about the shape of the timing
// distribution (iteration times are skewed, with rare slow outliers), it
// works on the handful of samples a CI run gives, and with small samples its
// p-value is exact rather than an approximation. A bootstrap of the median
// ratio needs more samples than a CI run has before its interval means much.
//
// Its limit: with m and n samples the smallest p it can give is
// 1/C(m+n, n) (all of NEW above all of BASE): 1/20 = 0.05 for 3 against 3,
// 1/6 for 2 against 2, 1/2 for 1 against 1. Where that floor is above alpha
// the test can never reject, and the caller must not read "not significant"
// as "no regression" (see min_attainable_p).
#pragma once
#include <vector>

namespace ptdp {

struct RankTest {
  double u = 0;        // pairs (b, n) with n > b, ties counting one half
  double p = 1;        // P(U >= u) when BASE and NEW come from one distribution
  bool exact = false;  // the exact distribution (else the normal approximation)
};

// Samples per side up to which the exact distribution is used; beyond it the
// normal approximation with tie and continuity corrections is within about
// 0.001 of the exact p at the gate's levels.
inline constexpr int kExactMaxSamples = 20;

// The one-sided test that NEW's values tend to be larger than BASE's (for
// iteration times: slower). Exact (ties included: the permutation
// distribution of the midrank sum) when both sides have at most
// kExactMaxSamples values; normal approximation beyond. Throws
// std::invalid_argument when either side is empty.
RankTest mann_whitney_greater(const std::vector<double>& base, const std::vector<double>& now);

// 1/C(m+n, n): the smallest p-value the test can give with m and n samples.
double min_attainable_p(int m, int n);

// The spread of a set of samples as a box plot draws it: quartiles by linear
// interpolation between order statistics, and Tukey's upper fence
// q3 + 1.5·(q3 − q1), beyond which a value is outside the measured spread
// (one slow outlier moves neither quartile, unlike the maximum).
struct Spread {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0, upper_fence = 0;
};
// Throws std::invalid_argument for no samples.
Spread spread_of(std::vector<double> samples);

}  // namespace ptdp
