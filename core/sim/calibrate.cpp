// Benchmark JSON to calibration: samples, medians and the α–β fits.
#include "core/sim/calibrate.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

namespace ptdp {

using nlohmann::json;

namespace {

double seconds_of(const json& run) {
  const std::string unit = run.value("time_unit", "ns");
  const double scale = unit == "s" ? 1 : unit == "ms" ? 1e-3 : unit == "us" ? 1e-6 : 1e-9;
  return run.at("real_time").get<double>() * scale;
}

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

json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  try {
    json j = json::parse(in);
    if (!j.contains("benchmarks") || !j["benchmarks"].is_array())
      throw std::runtime_error(file.string() + ": not Google Benchmark JSON (no \"benchmarks\" list)");
    return j;
  } catch (const json::parse_error& e) {
    throw std::runtime_error(file.string() + ": not valid JSON: " + e.what());
  }
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

}  // namespace

Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine,
                      std::vector<CalibrationInput>* inputs) {
  Calibration c;
  c.machine = machine;
  std::vector<double> bandwidths, attention;
  std::map<std::string, std::vector<Point>> collectives;
  std::map<std::string, double> attention_seconds;  // "fwd", "bwd" of the unfused core
  std::string attention_name;
  for (const auto& file : files) {
    const json j = read_json(file);
    const json ctx = j.value("context", json::object());
    CalibrationInput in{file.filename().string(), ctx.value("ptdp_hardware", "?"), ctx.value("ptdp_precision", "?")};
    c.precision = ctx.value("ptdp_precision", c.precision);
    for (const auto& run : j["benchmarks"]) {
      if (run.value("run_type", "iteration") != "iteration") continue;
      if (run.contains("error_occurred") && run["error_occurred"].get<bool>()) { ++in.skipped; continue; }
      const std::string label = run.value("label", "");
      const double s = seconds_of(run);
      try {
        if (label == "gemm") {
          c.gemms.push_back({{run.at("m").get<double>(), run.at("n").get<double>(), run.at("k").get<double>(),
                              run.value("batch", 1.0)}, s});
          ++in.gemms;
        } else if (label == "memory") {
          bandwidths.push_back(run.at("bytes").get<double>() / s / 1e9);
          ++in.memory;
        } else if (const std::string name = run.value("name", ""); label == "attention" &&
                   name.rfind("attention/unfused_fused_softmax_", 0) == 0) {
          attention_seconds[name.find("_bwd/") != std::string::npos ? "bwd" : "fwd"] = s;
          attention_name = name;
          ++in.attention;
        } else if (label == "flash_attention") {
          attention.push_back(run.at("flops").get<double>() / s / 1e12);
          ++in.attention;
        } else if (const auto coll = collective_from_name(label); coll && run.contains("bus_factor")) {
          const bool one_node = run.at("ranks_per_node").get<double>() >= run.at("ranks").get<double>();
          collectives[collective_key(*coll, one_node)].push_back(
              {run.at("bytes").get<double>(), s, run.at("bus_factor").get<double>()});
          ++in.collectives;
        }
      } catch (const json::exception& e) {
        throw std::runtime_error(file.string() + ": " + run.value("name", "?") + ": missing counter: " + e.what());
      }
    }
    c.source += (c.source.empty() ? "" : "; ") + in.file + " (" + in.hardware + ", commit " +
                ctx.value("ptdp_commit", "?") + ", " + ctx.value("date", "?") + ")";
    if (inputs != nullptr) inputs->push_back(in);
  }
  add_attention_gemms(attention_seconds, attention_name, c);
  c.memory_bandwidth_gbs = median(bandwidths);
  double sum = 0;
  for (double a : attention) sum += a;
  c.flash_attention_tflops = attention.empty() ? 0 : sum / static_cast<double>(attention.size());
  for (auto& [key, points] : collectives) c.collectives[key] = fit(points);
  return c;
}

}  // namespace ptdp
