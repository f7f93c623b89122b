// Variable-length gathers through a fixed-size all-gather: lengths first, then padded data.
#include "core/comm/host_gather.h"

#include <algorithm>

namespace ptdp {

std::vector<std::vector<double>> gather_host(Communicator& host, const std::vector<double>& mine) {
  const int n = host.size();
  std::vector<double> lengths(static_cast<std::size_t>(n));
  const double my_length = static_cast<double>(mine.size());
  host.all_gather(&my_length, lengths.data(), 1, DType::f64);
  std::size_t longest = 0;
  for (double l : lengths) longest = std::max(longest, static_cast<std::size_t>(l));
  std::vector<double> padded(mine);
  padded.resize(longest);
  std::vector<double> all(longest * static_cast<std::size_t>(n));
  if (longest > 0) host.all_gather(padded.data(), all.data(), static_cast<std::int64_t>(longest), DType::f64);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(n));
  for (std::size_t r = 0; r < out.size(); ++r) {
    const auto begin = all.begin() + static_cast<std::ptrdiff_t>(r * longest);
    out[r].assign(begin, begin + static_cast<std::ptrdiff_t>(lengths[r]));
  }
  return out;
}

std::vector<double> gather_host(Communicator& host, double mine) {
  std::vector<double> out(static_cast<std::size_t>(host.size()));
  host.all_gather(&mine, out.data(), 1, DType::f64);
  return out;
}

}  // namespace ptdp
