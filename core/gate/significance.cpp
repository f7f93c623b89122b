// The one-sided Mann–Whitney U test: ranks of the pooled samples (ties get
// their midrank), and the distribution of NEW's rank sum when every split of
// the pool into BASE and NEW is equally likely.
#include "core/gate/significance.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace ptdp {

namespace {

// A run of equal values in the sorted pool: how many, how many are NEW's, and
// their midrank doubled (ranks i+1..j share (i+1+j)/2; doubled it is an integer).
struct TieGroup {
  int size = 0, from_new = 0, rank2 = 0;
};

std::vector<TieGroup> tie_groups(const std::vector<double>& base, const std::vector<double>& now) {
  std::vector<std::pair<double, bool>> pool;  // (value, is NEW's)
  for (const double v : base) pool.emplace_back(v, false);
  for (const double v : now) pool.emplace_back(v, true);
  std::sort(pool.begin(), pool.end());
  std::vector<TieGroup> groups;
  for (std::size_t i = 0; i < pool.size();) {
    std::size_t j = i;
    TieGroup g;
    for (; j < pool.size() && pool[j].first == pool[i].first; ++j) g.from_new += pool[j].second ? 1 : 0;
    g.size = static_cast<int>(j - i);
    g.rank2 = static_cast<int>(i + 1 + j);
    groups.push_back(g);
    i = j;
  }
  return groups;
}

double choose(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// P(doubled rank sum of n NEW values >= observed) over all C(N, n) splits: a
// count of splits by (values taken, rank sum), one tie group at a time; a
// group of size t gives C(t, c) ways to take c of its values.
double exact_p(const std::vector<TieGroup>& groups, int n, int observed_rank2) {
  int max_sum = 0;
  for (const auto& g : groups) max_sum += g.size * g.rank2;
  std::vector<std::vector<double>> ways(n + 1, std::vector<double>(max_sum + 1, 0.0));
  ways[0][0] = 1;
  for (const auto& g : groups) {
    std::vector<std::vector<double>> next(n + 1, std::vector<double>(max_sum + 1, 0.0));
    for (int k = 0; k <= n; ++k)
      for (int s = 0; s <= max_sum; ++s) {
        if (ways[k][s] == 0) continue;
        for (int c = 0; c <= g.size && k + c <= n; ++c) next[k + c][s + c * g.rank2] += ways[k][s] * choose(g.size, c);
      }
    ways = std::move(next);
  }
  double at_least = 0, total = 0;
  for (int s = 0; s <= max_sum; ++s) {
    total += ways[n][s];
    if (s >= observed_rank2) at_least += ways[n][s];
  }
  return at_least / total;
}

// The normal approximation: U's mean mn/2, its variance with the tie
// correction, and a continuity correction of one half.
double normal_p(const std::vector<TieGroup>& groups, int m, int n, double u) {
  const double big_n = m + n;
  double ties = 0;
  for (const auto& g : groups) ties += std::pow(g.size, 3) - g.size;
  const double var = m * n / 12.0 * ((big_n + 1) - ties / (big_n * (big_n - 1)));
  if (var <= 0) return 1;  // every value equal: nothing suggests NEW is larger
  const double z = (u - m * n / 2.0 - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace

RankTest mann_whitney_greater(const std::vector<double>& base, const std::vector<double>& now) {
  if (base.empty() || now.empty()) throw std::invalid_argument("the Mann-Whitney test needs samples on both sides");
  const int m = static_cast<int>(base.size()), n = static_cast<int>(now.size());
  const std::vector<TieGroup> groups = tie_groups(base, now);
  int rank2 = 0;  // NEW's doubled rank sum
  for (const auto& g : groups) rank2 += g.from_new * g.rank2;
  RankTest t;
  t.u = rank2 / 2.0 - n * (n + 1) / 2.0;
  t.exact = m <= kExactMaxSamples && n <= kExactMaxSamples;
  t.p = t.exact ? exact_p(groups, n, rank2) : normal_p(groups, m, n, t.u);
  return t;
}

double min_attainable_p(int m, int n) { return 1.0 / choose(m + n, n); }

Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("a spread needs samples");
  std::sort(samples.begin(), samples.end());
  const auto quantile = [&samples](double q) {
    const double at = q * static_cast<double>(samples.size() - 1);
    const auto below = static_cast<std::size_t>(at);
    const std::size_t above = std::min(below + 1, samples.size() - 1);
    return samples[below] + (samples[above] - samples[below]) * (at - static_cast<double>(below));
  };
  Spread s{samples.front(), quantile(0.25), quantile(0.5), quantile(0.75), samples.back(), 0};
  s.upper_fence = s.q3 + 1.5 * (s.q3 - s.q1);
  return s;
}

}  // namespace ptdp
