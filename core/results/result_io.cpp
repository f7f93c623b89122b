// Sample statistics and provenance.
#include "core/results/result_io.h"

#include <algorithm>
#include <numeric>

#include "core/results/build_info.h"

extern "C" char* openblas_get_config(void);

namespace ptdp {

double median(std::vector<double> s) {
  if (s.empty()) return 0.0;
  std::sort(s.begin(), s.end());
  const std::size_t k = s.size() / 2;
  return s.size() % 2 ? s[k] : 0.5 * (s[k - 1] + s[k]);
}

ResultMode mode_at(const JsonAt& j) {
  const JsonAt m = j.at("mode");
  if (const auto mode = parse_result_mode(m.get<std::string>())) return *mode;
  std::string names;  // "measured, projected or slice"
  for (std::size_t i = 0; i < kResultModeNames.size(); ++i)
    names += (i == 0 ? "" : i + 1 == kResultModeNames.size() ? " or " : ", ") + std::string(kResultModeNames[i]);
  m.refuse("must be " + names + " (got " + json_excerpt(m.value()) + ")");
}

double mean(const std::vector<double>& s) {
  return s.empty() ? 0.0 : std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
}

nlohmann::json summarize_samples(const std::vector<double>& samples) {
  if (samples.empty())
    return {{"median", nullptr}, {"min", nullptr}, {"max", nullptr}, {"mean", nullptr}, {"samples", samples}};
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  return {{"median", median(samples)}, {"min", *lo}, {"max", *hi}, {"mean", mean(samples)}, {"samples", samples}};
}

nlohmann::json software_info() {
  nlohmann::json j = {{"commit", build_commit()}, {"compiler", std::string("g++ ") + __VERSION__}};
  j["openblas"] = openblas_get_config();
  return j;
}

}  // namespace ptdp
