// A metric over commits: a folder of results read in file-name order, grouped
// by configuration, each point gated against the one before it.
#include "core/gate/history.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "core/results/metric_path.h"
#include "core/results/result_io.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

std::string commit_of(const json& doc) {
  const json* sw = doc.is_object() && doc.contains("software") ? &doc["software"] : nullptr;
  if (sw == nullptr || !sw->is_object() || !sw->contains("commit") || !(*sw)["commit"].is_string()) return "?";
  return (*sw)["commit"].get<std::string>();
}

// The index of `e`'s series in `h` (found through `index`, by match_key), added at the end when new.
std::size_t series_of(History& h, std::unordered_map<std::string, std::size_t>& index, const CompareEntry& e) {
  const auto [it, fresh] = index.emplace(match_key(e), h.series.size());
  if (fresh) h.series.push_back({e.identity, e.label, e.mode, {}});
  return it->second;
}

// The gate between the previous point's entry and this one's: compare_results
// on the pair alone, so `ptdp compare` and history never disagree.
void gate(HistoryPoint& p, const CompareEntry& before, const CompareEntry& now, double threshold_pct, double alpha) {
  const Comparison c = compare_results({before}, {now}, threshold_pct, alpha);
  if (!c.rows.empty()) {
    p.gate = c.rows.front();
    p.flagged = p.gate->regressed;
  } else {
    p.not_judged = c.unusable.empty() ? "not matched" : c.unusable.front();
  }
}

json or_null_p(const std::optional<CompareRow>& row) {
  return row && row->noise.p_value ? json(*row->noise.p_value) : json(nullptr);
}

}  // namespace

std::vector<std::filesystem::path> history_files(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") paths.push_back(e.path());
  if (ec) throw std::runtime_error(dir.string() + ": cannot read the folder: " + ec.message());
  if (paths.empty()) throw std::runtime_error(dir.string() + ": no *.json result files");
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<HistoryFile> load_history_files(const std::vector<std::filesystem::path>& paths) {
  std::vector<HistoryFile> files;
  for (const auto& path : paths) {
    const json doc = read_json_file(path);
    files.push_back({path.filename().string(), commit_of(doc), compare_entries(doc, path.string())});
  }
  return files;
}

std::vector<HistoryFile> load_history_folder(const std::filesystem::path& dir) {
  return load_history_files(history_files(dir));
}

History build_history(const std::vector<HistoryFile>& files, const std::string& metric, double threshold_pct,
                      double alpha) {
  const MetricPath path(metric);  // UnknownMetric for a name no result reports
  History h;
  h.metric = metric;
  h.threshold_pct = threshold_pct;
  h.alpha = alpha;
  std::unordered_map<std::string, std::size_t> series_index;  // match_key -> index in h.series
  std::vector<const CompareEntry*> last;                       // per series: its previous entry
  bool found = false;
  for (const auto& f : files)
    for (const auto& e : f.entries) {
      const std::size_t index = series_of(h, series_index, e);
      HistorySeries& s = h.series[index];
      if (last.size() <= index) last.resize(index + 1, nullptr);
      HistoryPoint p{f.file, f.commit, path.of(e.result), std::nullopt, std::nullopt, false, ""};
      found = found || p.value.has_value();
      if (last[index] != nullptr) {
        const auto before = s.points.back().value;
        if (before && p.value && *before != 0) p.delta_pct = (*p.value - *before) * 100.0 / *before;
        gate(p, *last[index], e, threshold_pct, alpha);
      }
      h.flagged += p.flagged ? 1 : 0;
      s.points.push_back(p);
      last[index] = &e;
    }
  if (!found) throw std::invalid_argument("no result has metrics." + metric + " as a number");
  return h;
}

json to_json(const History& h) {
  json series = json::array();
  for (const auto& s : h.series) {
    json points = json::array();
    for (const auto& p : s.points) {
      points.push_back({{"file", p.file}, {"commit", p.commit}, {"value", or_null(p.value)},
                        {"flagged", p.flagged}, {"delta_pct", or_null(p.delta_pct)}, {"p_value", or_null_p(p.gate)}});
      if (!p.not_judged.empty()) points.back()["not_judged"] = p.not_judged;
    }
    series.push_back({{"label", s.label}, {"key", s.identity}, {"mode", to_string(s.mode)}, {"points", points}});
  }
  return {{"schema", kHistorySchema}, {"metric", h.metric}, {"threshold_pct", h.threshold_pct},
          {"alpha", h.alpha},         {"flagged", h.flagged}, {"series", series}};
}

}  // namespace ptdp
