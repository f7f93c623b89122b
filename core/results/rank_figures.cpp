// Straggler summary and the JSON of the per-rank blocks.
#include "core/results/rank_figures.h"

#include <cstdio>
#include <map>

#include "core/results/result_io.h"

namespace ptdp {

std::optional<StragglerSummary> straggler_summary(const std::vector<RankFigures>& ranks) {
  if (ranks.empty()) return std::nullopt;
  std::vector<double> compute;
  for (const RankFigures& r : ranks) compute.push_back(r.compute_s);
  const double med = median(compute);
  if (!(med > 0)) return std::nullopt;
  StragglerSummary s;
  s.median_compute_s = med;
  std::map<int, std::pair<double, int>> per_node;  // node -> (compute sum, ranks)
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].compute_s > s.rank_compute_s) s.rank = static_cast<int>(i), s.rank_compute_s = ranks[i].compute_s;
    auto& [sum, n] = per_node[ranks[i].node];
    sum += ranks[i].compute_s, n += 1;
  }
  for (const auto& [node, sum_n] : per_node) {
    const double mean_s = sum_n.first / sum_n.second;
    if (mean_s > s.node_compute_s) s.node = node, s.node_compute_s = mean_s;
  }
  for (const RankFigures& r : ranks)
    if (r.node == s.node) s.node_host = r.host;
  s.rank_percent = 100 * (s.rank_compute_s / med - 1);
  s.node_percent = 100 * (s.node_compute_s / med - 1);
  return s;
}

std::vector<std::string> describe(const StragglerSummary& s, int hosts) {
  char line[512];
  std::snprintf(line, sizeof line, "slowest rank %d: compute %.4g s/iteration, %+.1f%% against the median rank (%.4g s)",
                s.rank, s.rank_compute_s, s.rank_percent, s.median_compute_s);
  std::vector<std::string> out{line};
  if (hosts < 2) return out;
  std::snprintf(line, sizeof line, "slowest node %d (%s): mean compute %.4g s/iteration, %+.1f%% against the median rank",
                s.node, s.node_host.c_str(), s.node_compute_s, s.node_percent);
  out.emplace_back(line);
  return out;
}

nlohmann::json to_json(const std::vector<RankFigures>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (const RankFigures& r : ranks)
    out.push_back({{"host", r.host}, {"local_rank", r.local_rank}, {"node", r.node},
                   {"iteration_s", r.iteration_s}, {"compute_s", r.compute_s}, {"comm_wait_s", r.comm_wait_s}});
  return out;
}

std::vector<RankFigures> ranks_of(const JsonAt& j) {
  std::vector<RankFigures> out;
  for (const JsonAt& e : j.array().elements()) {
    e.object();
    RankFigures r;
    r.host = e.at("host").get<std::string>();
    r.local_rank = e.get<int>("local_rank", 0);
    r.node = e.get<int>("node", 0);
    for (const JsonAt& t : e.at("iteration_s").elements()) r.iteration_s.push_back(t.get<double>());
    r.compute_s = e.get<double>("compute_s", 0);
    r.comm_wait_s = e.get<double>("comm_wait_s", 0);
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::json to_json(const StragglerSummary& s) {
  return {{"median_compute_s", s.median_compute_s},
          {"slowest_rank", {{"rank", s.rank}, {"compute_s", s.rank_compute_s}, {"percent_above_median", s.rank_percent}}},
          {"slowest_node", {{"node", s.node}, {"host", s.node_host}, {"compute_s", s.node_compute_s},
                            {"percent_above_median", s.node_percent}}},
          {"definition", "compute seconds per iteration (forward and backward less the collective waits inside "
                         "them); the median is over ranks, a node's figure the mean of its ranks"}};
}

}  // namespace ptdp
