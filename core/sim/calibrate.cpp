// Benchmark JSON to calibration: samples, medians and the α–β fits.
#include "core/sim/calibrate.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <stdexcept>
#include <utility>

#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

double benchmark_seconds(const json& run) {
  const std::string unit = run.value("time_unit", "ns");
  const double scale = unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : 1e-9;
  return run.at("real_time").get<double>() * scale;
}

json read_benchmark_json(const std::filesystem::path& file) {
  // Google Benchmark writes a statistic it cannot compute (the cv of a counter
  // that is always 0, over repetitions) as a bare NaN, which JSON has not:
  // read it as null.
  static const std::regex non_finite(R"(:\s*-?(NaN|nan|inf|Infinity)\s*([,}\n]))");
  json j = parse_json(std::regex_replace(read_json_text(file), non_finite, ": null$2"), file.string());
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array())
    throw std::runtime_error(file.string() + ": not Google Benchmark JSON (no \"benchmarks\" list)");
  return j;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Point {
  double bytes, seconds, factor;
};

// α = the smallest message's time; busbw = median of factor·bytes/(t − α) over
// the large messages: at least 1 MiB, or within 16× of the largest when none is.
CollectiveRate fit(std::vector<Point> points) {
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  const double alpha = points.front().seconds;
  const double large = std::min<double>(1 << 20, points.back().bytes / 16);
  std::vector<double> rates;
  for (const auto& p : points)
    if (p.bytes >= large) rates.push_back(p.factor * p.bytes / std::max(p.seconds - alpha, 0.5 * p.seconds));
  return {alpha * 1e6, median(rates) / 1e9};
}

// "attention/unfused_fused_softmax_fwd/b:2/s:64/heads:4/d:32/..." -> the value of "key:".
double name_arg(const std::string& name, const std::string& key) {
  const auto at = name.find("/" + key + ":");
  if (at == std::string::npos) throw std::runtime_error(name + ": no " + key + " in the benchmark's name");
  return std::stod(name.substr(at + key.size() + 2));
}

// The unfused attention core (label "attention", the fused scale+mask+softmax
// variant, which plan.fused_ops runs by default) as the batched GEMMs the cost
// model prices it by: forward QKᵀ (s, s, d) and ·V (s, d, s), backward four
// more, all of equal FLOPs over a batch of b·heads. Each GEMM sample gets a
// sixth of the measured forward + backward time, softmax included: on a CPU the
// score loops, not the GEMM rate, set the attention's time.
void add_attention_gemms(const std::map<std::string, double>& seconds, const std::string& name, Calibration& c) {
  const auto fwd = seconds.find("fwd"), bwd = seconds.find("bwd");
  if (fwd == seconds.end() || bwd == seconds.end()) return;
  const double b = name_arg(name, "b"), s = name_arg(name, "s"), a = name_arg(name, "heads"), d = name_arg(name, "d");
  const double each = (fwd->second + bwd->second) / 6;
  c.gemms.push_back({{s, s, d, b * a}, each});
  c.gemms.push_back({{s, d, s, b * a}, each});
}

// A benchmark's fastest run over its repetitions (--benchmark_repetitions)
// and over every file of the same count of copies: a training iteration is
// timed as the fastest of its run, so its parts are too, and a burst of load on
// a shared machine spoils one repetition or one attempt rather than the sample.
struct FastestRuns {
  std::vector<json> runs;
  std::map<std::string, std::size_t> at;  // run name -> index in runs
  std::string file;                       // the last file read, for messages

  void add(const json& benchmarks, const std::string& from) {
    file = from;
    const auto failed = [](const json& r) { return r.value("error_occurred", false); };
    for (json run : benchmarks) {
      if (run.value("run_type", "iteration") != "iteration") continue;
      run["ptdp_file"] = from;  // for messages
      const std::string name = run.value("run_name", run.value("name", ""));
      const auto it = at.find(name);
      if (!run.contains("run_name") || it == at.end()) {  // a file without run names: every run its own
        at[name] = runs.size(), runs.push_back(std::move(run));
      } else if (json& kept = runs[it->second];
                 !failed(run) && (failed(kept) || benchmark_seconds(run) < benchmark_seconds(kept))) {
        kept = std::move(run);
      }
    }
  }

  std::map<std::string, double> seconds() const {
    std::map<std::string, double> out;
    for (const auto& run : runs)
      if (!run.value("error_occurred", false)) out[run.value("run_name", run.value("name", ""))] = benchmark_seconds(run);
    return out;
  }
};

// Per-rank slowdown when copies ran at once: the median over the benchmarks
// both hold of time with copies / time alone.
double sharing_slowdown(const FastestRuns& shared, const FastestRuns& alone) {
  std::vector<double> ratios;
  const auto lone = alone.seconds();
  for (const auto& [name, s] : shared.seconds())
    if (const auto it = lone.find(name); it != lone.end()) ratios.push_back(s / it->second);
  if (ratios.empty()) throw std::runtime_error(shared.file + ": no benchmark in common with a lone (ptdp_concurrent 1) run");
  return median(ratios);
}

// The samples of the lone runs: GEMMs, bandwidth, attention, collectives.
void add_samples(const FastestRuns& lone, Calibration& c) {
  std::vector<double> bandwidths, attention;
  std::map<std::string, std::vector<Point>> collectives;
  std::map<std::string, double> attention_seconds;  // "fwd", "bwd" of the unfused core
  std::string attention_name;
  for (const auto& run : lone.runs) {
    const std::string name = run.contains("name") ? run["name"].dump() : "?";
    try {
      if (run.value("error_occurred", false)) continue;
      const std::string label = run.value("label", "");
      const double s = benchmark_seconds(run);
      if (label == "gemm") {
        c.gemms.push_back({{run.at("m").get<double>(), run.at("n").get<double>(), run.at("k").get<double>(),
                            run.value("batch", 1.0)}, s});
      } else if (label == "memory") {
        bandwidths.push_back(run.at("bytes").get<double>() / s / 1e9);
      } else if (const std::string bench = run.value("name", "");
                 label == "attention" && bench.rfind("attention/unfused_fused_softmax_", 0) == 0) {
        attention_seconds[bench.find("_bwd/") != std::string::npos ? "bwd" : "fwd"] = s;
        attention_name = bench;
      } else if (label == "flash_attention") {
        attention.push_back(run.at("flops").get<double>() / s / 1e12);
      } else if (const auto coll = collective_from_name(label); coll && run.contains("bus_factor")) {
        const bool one_node = run.at("ranks_per_node").get<double>() >= run.at("ranks").get<double>();
        collectives[collective_key(*coll, one_node)].push_back(
            {run.at("bytes").get<double>(), s, run.at("bus_factor").get<double>()});
      }
    } catch (const json::exception& e) {
      throw std::runtime_error(run.value("ptdp_file", "?") + ": " + name + ": missing or malformed counter: " + e.what());
    }
  }
  add_attention_gemms(attention_seconds, attention_name, c);
  c.memory_bandwidth_gbs = median(bandwidths);
  double sum = 0;
  for (double a : attention) sum += a;
  c.flash_attention_tflops = attention.empty() ? 0 : sum / static_cast<double>(attention.size());
  for (auto& [key, points] : collectives) c.collectives[key] = fit(points);
}

}  // namespace

Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine) {
  Calibration c;
  c.machine = machine;
  std::map<int, FastestRuns> by_copies;  // copies of the program that ran at once -> their runs
  for (const auto& file : files) {
    const json j = read_benchmark_json(file);
    try {
      const json ctx = j.value("context", json::object());
      c.precision = ctx.value("ptdp_precision", c.precision);
      const int copies = std::max(1, std::atoi(ctx.value("ptdp_concurrent", "1").c_str()));
      by_copies[copies].add(j["benchmarks"], file.string());
      c.source += (c.source.empty() ? "" : "; ") + file.filename().string() + " (" + ctx.value("ptdp_hardware", "?") +
                  ", commit " + ctx.value("ptdp_commit", "?") + ", " + ctx.value("date", "?") + ")";
    } catch (const json::exception& e) {  // a field of the wrong type: the file is not what a benchmark writes
      throw std::runtime_error(file.string() + ": malformed benchmark JSON: " + e.what());
    }
  }
  add_samples(by_copies[1], c);
  for (const auto& [copies, runs] : by_copies)
    if (copies > 1) c.host_sharing[copies] = sharing_slowdown(runs, by_copies[1]);
  return c;
}

}  // namespace ptdp
