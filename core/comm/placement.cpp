// Rank placement from host names, and the gather of those names.
#include "core/comm/placement.h"

#include <algorithm>
#include <map>

#include "core/comm/host_gather.h"

namespace ptdp {

namespace {

// A string through the doubles-only host gather: one character a value.
std::vector<double> chars_of(const std::string& s) { return std::vector<double>(s.begin(), s.end()); }
std::string string_of(const std::vector<double>& v) {
  std::string s;
  for (const double c : v) s.push_back(static_cast<char>(c));
  return s;
}

}  // namespace

std::vector<RankPlace> placement_of(const std::vector<std::string>& hosts) {
  std::vector<RankPlace> out;
  std::map<std::string, int> ranks_on, node_of;
  for (const std::string& host : hosts) {
    const int node = node_of.emplace(host, static_cast<int>(node_of.size())).first->second;
    out.push_back({host, ranks_on[host]++, node});
  }
  return out;
}

int ranks_per_host(const std::vector<RankPlace>& places) {
  int most = 1;
  for (const RankPlace& p : places) most = std::max(most, p.local_rank + 1);
  return most;
}

std::vector<RankPlace> gather_placement(Communicator& world, const std::string& host) {
  std::vector<std::string> hosts;
  for (const auto& name : gather_host(world, chars_of(host))) hosts.push_back(string_of(name));
  return placement_of(hosts);
}

}  // namespace ptdp
