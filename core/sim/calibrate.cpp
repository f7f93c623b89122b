// Benchmark JSON to calibration: samples, medians and the α–β fits.
#include "core/sim/calibrate.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/config/bounds.h"
#include "core/config/json_read.h"
#include "core/layer_ops/op_kind.h"
#include "core/results/plausibility.h"

namespace ptdp {

using nlohmann::json;

namespace {

// Seconds per unit of Google Benchmark's time units.
std::optional<double> unit_seconds(const std::string& unit) {
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  return std::nullopt;
}

// `text` with each bare NaN or infinity after a ':' read as null: Google
// Benchmark writes a statistic it cannot compute (the cv of a counter that is
// always 0, over repetitions) so, and JSON has none. One pass, no backtracking.
std::string mend_non_finite(const std::string& text) {
  static constexpr const char* kWords[] = {"NaN", "nan", "Infinity", "inf"};
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    out += text[i];
    if (text[i++] != ':') continue;
    std::size_t at = i;
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    const std::size_t word_at = at < text.size() && text[at] == '-' ? at + 1 : at;
    for (const std::string word : kWords) {
      if (text.compare(word_at, word.size(), word) != 0) continue;
      std::size_t end = word_at + word.size();
      bool newline = false;
      while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) newline |= text[end++] == '\n';
      if (!newline && (end == text.size() || (text[end] != ',' && text[end] != '}'))) break;
      out += text.substr(i, at - i) + "null";
      i = word_at + word.size();
      break;
    }
  }
  return out;
}

}  // namespace

double benchmark_seconds(const JsonAt& run) {
  const JsonAt unit = run.at("time_unit");
  const auto scale = unit_seconds(unit.get<std::string>());
  if (!scale) unit.refuse("must be a time unit of Google Benchmark: ns, us, ms or s (got " + json_excerpt(unit.value()) + ")");
  const JsonAt time = run.at("real_time");
  const double raw = time.get<double>();
  std::string why = positive_figure_problem(raw, kMaxSeconds / *scale);
  if (why.empty() && !std::isnormal(raw * *scale)) why = "is denormal in seconds";
  if (!why.empty()) time.refuse(why + " (time_unit " + unit.get<std::string>() + ")");
  return raw * *scale;
}

double benchmark_seconds(const json& run) { return benchmark_seconds(JsonAt(run, "benchmark run")); }

json parse_benchmark_json(const std::string& text, const std::string& source) {
  json j = parse_json(mend_non_finite(text), source);
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array())
    throw std::runtime_error(source + ": not Google Benchmark JSON (no \"benchmarks\" list)");
  return j;
}

json read_benchmark_json(const std::filesystem::path& file) {
  return parse_benchmark_json(read_json_text(file), file.string());
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

constexpr double kMaxBusFactor = 2;  // nccl-tests' largest bus factor: all-reduce's 2(n-1)/n

// A counter of a run (m, bytes, flops, ...): a finite, positive, normal number of at most `max`.
double run_counter(const JsonAt& run, const char* key, double max) {
  const JsonAt v = run.at(key);
  const double x = v.get<double>();
  if (const std::string why = positive_figure_problem(x, max); !why.empty()) v.refuse(why);
  return x;
}

// The unfused attention core timed with fused ops (its fused scale+mask+softmax,
// which plan.fused_ops runs by default) as the batched GEMMs the cost model
// prices it by: forward QKᵀ (s, s, d) and ·V (s, d, s), backward four more, all
// of equal FLOPs over a batch of b·heads. Each GEMM sample gets a sixth of the
// measured forward + backward time, softmax included: on a CPU the score loops,
// not the GEMM rate, set the attention's time. `core`: a run of it (its sizes).
void add_attention_gemms(const std::map<OpKind, double>& seconds, const std::optional<JsonAt>& core, Calibration& c) {
  const auto fwd = seconds.find(OpKind::attention_forward), bwd = seconds.find(OpKind::attention_backward);
  if (fwd == seconds.end() || bwd == seconds.end() || !core) return;
  const auto size = [&core](const char* key) { return run_counter(*core, key, static_cast<double>(kMaxSize)); };
  const double b = size("b"), s = size("s"), a = size("heads"), head_dim = size("d");
  const double each = (fwd->second + bwd->second) / 6;
  c.gemms.push_back({{s, s, head_dim, b * a}, each});
  c.gemms.push_back({{s, head_dim, s, b * a}, each});
}

// A 0/1 counter of a run (an attention run's plan: flash, fused_ops).
bool run_flag(const JsonAt& run, const char* key) {
  const JsonAt v = run.at(key);
  const double x = v.get<double>();
  if (x != 0 && x != 1) v.refuse("must be 0 or 1 (got " + json_excerpt(v.value()) + ")");
  return x == 1;
}

// One iteration run that did not fail: its JSON, where it sits (for refusals) and its time.
struct BenchmarkRun {
  json value;
  std::string file, pointer, name;
  double seconds = 0;
  JsonAt at() const { return JsonAt(value, file, pointer); }
};

// A benchmark's fastest run over its repetitions (--benchmark_repetitions)
// and over every file of the same count of copies: a training iteration is
// timed as the fastest of its run, so its parts are too, and a burst of load on
// a shared machine spoils one repetition or one attempt rather than the sample.
// Aggregates and failed runs are no samples; every other run's time is checked.
struct FastestRuns {
  std::vector<BenchmarkRun> runs;
  std::map<std::string, std::size_t> at;  // run name -> index in runs
  std::string file;                       // the last file read, for messages

  void add(const JsonAt& benchmarks) {
    file = benchmarks.source();
    for (const JsonAt& r : benchmarks.elements()) {
      r.object();
      if (r.get<std::string>("run_type", "iteration") != "iteration" || r.get<bool>("error_occurred", false)) continue;
      const auto run_name = r.find("run_name");
      BenchmarkRun run{r.value(), r.source(), r.pointer(),
                       run_name ? run_name->get<std::string>() : r.get<std::string>("name", ""), benchmark_seconds(r)};
      const auto it = at.find(run.name);
      if (!run_name || it == at.end()) at[run.name] = runs.size(), runs.push_back(std::move(run));  // no run names: each its own
      else if (run.seconds < runs[it->second].seconds) runs[it->second] = std::move(run);
    }
  }

  std::map<std::string, double> seconds() const {
    std::map<std::string, double> out;
    for (const auto& run : runs) out[run.name] = run.seconds;
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

// The sample a run of an op gives, by its kind (its label, core/layer_ops/op_kind.h)
// and how the cost model prices that kind: a GEMM by its shape, the bytes and
// time of a memory-bound op (the bandwidth they achieve together), the attention
// core (flash: its rate; unfused with fused ops: its GEMMs, paired below). A
// fused op gives none.
struct OpSamples {
  double memory_bytes = 0, memory_seconds = 0;  // of the memory-bound runs together
  std::vector<double> flash_tflops;
  std::map<OpKind, double> attention_seconds;  // forward and backward of the unfused core
  std::optional<JsonAt> attention_run;

  void add(OpKind kind, const JsonAt& r, double s, Calibration& c) {
    switch (kind_traits(kind).basis) {
      case CostBasis::gemm: {
        const double dim = static_cast<double>(kMaxElements);  // the bound a table's GEMM shapes have
        c.gemms.push_back({{run_counter(r, "m", dim), run_counter(r, "n", dim), run_counter(r, "k", dim),
                            r.find("batch") ? run_counter(r, "batch", dim) : 1.0}, s});
        break;
      }
      case CostBasis::memory:
        if (r.find("bytes")) memory_bytes += run_counter(r, "bytes", static_cast<double>(kMaxMemoryBytes)), memory_seconds += s;
        break;
      case CostBasis::attention:
        if (run_flag(r, "flash")) {
          flash_tflops.push_back(run_counter(r, "flops", std::numeric_limits<double>::max()) / s / 1e12);
        } else if (run_flag(r, "fused_ops")) {
          attention_seconds[kind] = s;
          attention_run = r;
        }
        break;
      case CostBasis::fused: break;
    }
  }
};

// The samples of the lone runs: GEMMs, bandwidth, attention, collectives.
void add_samples(const FastestRuns& lone, Calibration& c) {
  OpSamples ops;
  std::map<std::string, std::vector<Point>> collectives;
  for (const auto& run : lone.runs) {
    const JsonAt r = run.at();
    const std::string label = r.get<std::string>("label", "");
    if (const auto kind = op_kind_from_name(label)) {
      ops.add(*kind, r, run.seconds, c);
    } else if (const auto coll = collective_from_name(label); coll && r.find("bus_factor")) {
      const double ranks = run_counter(r, "ranks", static_cast<double>(kMaxRanks));
      const bool one_node = run_counter(r, "ranks_per_node", static_cast<double>(kMaxRanks)) >= ranks;
      collectives[collective_key(*coll, one_node)].push_back({run_counter(r, "bytes", static_cast<double>(kMaxMemoryBytes)),
                                                              run.seconds, run_counter(r, "bus_factor", kMaxBusFactor)});
    }
  }
  add_attention_gemms(ops.attention_seconds, ops.attention_run, c);
  c.memory_bandwidth_gbs = ops.memory_seconds > 0 ? ops.memory_bytes / ops.memory_seconds / 1e9 : 0;
  double sum = 0;
  for (double a : ops.flash_tflops) sum += a;
  c.flash_attention_tflops = ops.flash_tflops.empty() ? 0 : sum / static_cast<double>(ops.flash_tflops.size());
  for (auto& [key, points] : collectives) c.collectives[key] = fit(points);
}

// The context of benchmark file `j`, which must be of `machine` (the profile
// the benchmarks ran for: Google Benchmark's custom context ptdp_machine).
JsonAt machine_context(const JsonAt& j, const std::string& machine) {
  const auto ctx = j.find("context");
  if (!ctx) j.refuse("has no \"context\": ptdp's benchmarks record the machine they ran for (ptdp_machine)");
  const JsonAt name = ctx->object().at("ptdp_machine");
  if (name.get<std::string>() != machine)
    name.refuse("the benchmarks ran for machine " + json_excerpt(name.value()) + ", not --machine " + machine);
  return *ctx;
}

// Copies of the program that ran at once (ptdp_concurrent, digits), 1 when not recorded.
int copies_of(const JsonAt& ctx) {
  const auto v = ctx.find("ptdp_concurrent");
  if (!v) return 1;
  const std::string text = v->get<std::string>();
  int n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxRanks)
    v->refuse("a count of copies in [1, " + std::to_string(kMaxRanks) + "] expected (got " + json_excerpt(v->value()) + ")");
  return n;
}

}  // namespace

Calibration calibrate(const std::vector<BenchmarkFile>& files, const std::string& machine) {
  Calibration c;
  c.machine = machine;
  std::string names;
  std::map<int, FastestRuns> by_copies;  // copies of the program that ran at once -> their runs
  for (const auto& file : files) {
    const JsonAt j(file.doc, file.name);
    const JsonAt ctx = machine_context(j.object(), machine);
    c.precision = ctx.get<std::string>("ptdp_precision", c.precision);
    const JsonAt benchmarks = j.at("benchmarks");
    if (benchmarks.array().value().empty()) benchmarks.refuse("holds no benchmark run");
    by_copies[copies_of(ctx)].add(benchmarks);
    const auto context = [&ctx](const char* key) { return cut_text(ctx.get<std::string>(key, "?"), 100); };
    const std::string stem = std::filesystem::path(file.name).filename().string();
    c.source += (c.source.empty() ? "" : "; ") + stem + " (" + context("ptdp_hardware") + ", commit " +
                context("ptdp_commit") + ", " + context("date") + ")";
    names += (names.empty() ? "" : ", ") + stem;
  }
  add_samples(by_copies[1], c);
  for (const auto& [copies, runs] : by_copies)
    if (copies > 1) c.host_sharing[copies] = sharing_slowdown(runs, by_copies[1]);
  // The table's own rules, as `ptdp project` reads it back: no measurement at all, a rate beyond bounds.
  return Calibration::from_json(c.to_json(), "the calibration of " + cut_text(names));
}

Calibration calibrate(const std::vector<std::filesystem::path>& files, const std::string& machine) {
  std::vector<BenchmarkFile> docs;
  for (const auto& file : files) docs.push_back({file.string(), read_benchmark_json(file)});
  return calibrate(docs, machine);
}

}  // namespace ptdp
