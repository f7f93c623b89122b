// The plausibility of a result's figures and the layout two results share.
#include "core/results/plausibility.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>

#include "core/config/bounds.h"
#include "core/config/json_read.h"
#include "core/results/metric_path.h"
#include "core/results/result_io.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

// Two figures that must agree may differ by the rounding of a writer that
// prints ten significant digits (ptdp prints seventeen).
constexpr double kAgreement = 1e-9;

std::string figure_text(double v) {
  char text[32];  // json's dump() would print a non-finite number as null
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * fraction);
  return text;
}

bool figures_agree(double a, double b) { return std::fabs(a - b) <= kAgreement * std::max(std::fabs(a), std::fabs(b)); }

// The number at `path` of `r`, or nothing with the reason added to `out`:
// missing, null, not a number, or positive_figure_problem(·, max).
std::optional<double> gated_figure(const json& r, std::initializer_list<const char*> path, double max,
                                   std::vector<FigureProblem>& out) {
  const json* cur = &r;
  std::string at;
  for (const char* key : path) {
    if (!cur->is_object()) {
      out.push_back({at, "is not an object (got " + json_excerpt(*cur) + ")"});
      return std::nullopt;
    }
    at += (at.empty() ? "" : ".") + std::string(key);
    if (!cur->contains(key)) {
      out.push_back({at, "is missing"});
      return std::nullopt;
    }
    cur = &(*cur)[key];
  }
  std::string why;
  if (cur->is_null()) why = "is null";
  else if (!cur->is_number()) why = "is not a number (got " + json_excerpt(*cur) + ")";
  else why = positive_figure_problem(cur->get<double>(), max);
  if (why.empty()) return cur->get<double>();
  out.push_back({at, why});
  return std::nullopt;
}

// metrics.iteration_s.samples: empty when absent or null; each a time, else nothing with the reason in `out`.
std::optional<std::vector<double>> valid_samples(const json& r, std::vector<FigureProblem>& out) {
  const json* s = json_at_path(r, {"metrics", "iteration_s", "samples"});
  if (s == nullptr || s->is_null()) return std::vector<double>{};
  const std::string field = "metrics.iteration_s.samples";
  if (!s->is_array()) {
    out.push_back({field, "is not a list (got " + json_excerpt(*s) + ")"});
    return std::nullopt;
  }
  std::vector<double> values;
  for (std::size_t i = 0; i < s->size(); ++i) {
    const json& v = (*s)[i];
    const std::string why = v.is_number() ? positive_figure_problem(v.get<double>(), kMaxSeconds)
                                          : "is not a finite positive number (got " + json_excerpt(v) + ")";
    if (!why.empty()) {
      out.push_back({field + "[" + std::to_string(i) + "]", why});
      return std::nullopt;
    }
    values.push_back(v.get<double>());
  }
  return values;
}

// t·p·d of the result's plan, each a positive integer; nothing with the reason in `out`.
std::optional<double> plan_gpus(const json& r, std::vector<FigureProblem>& out) {
  double gpus = 1;
  for (const char* key : {"tp", "pp", "dp"}) {
    const json* v = json_at_path(r, {"plan", key});
    if (v == nullptr || !v->is_number_integer() || v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > kMaxSize) {
      out.push_back({std::string("plan.") + key, "is not a parallel size in [1, " + std::to_string(kMaxSize) + "] (got " +
                                                     (v == nullptr ? std::string("nothing") : json_excerpt(*v)) + ")"});
      return std::nullopt;
    }
    gpus *= static_cast<double>(v->get<std::int64_t>());
  }
  return gpus;
}

// The machine's peak TFLOP/s for the plan's precision, when the result records one.
std::optional<double> machine_peak(const json& r) {
  const json* precision = json_at_path(r, {"plan", "precision"});
  if (precision == nullptr || !precision->is_string()) return std::nullopt;
  const json* peak = json_at_path(r, {"machine", "peak_tflops", precision->get_ref<const std::string&>().c_str()});
  if (peak == nullptr || !peak->is_number() || !(peak->get<double>() > 0)) return std::nullopt;
  return peak->get<double>();
}

// What the figures that are each plausible say together: the median is the
// samples' median, the TFLOP/s follow from the FLOPs, no iteration beats the peak.
void check_relations(const json& r, double tflops, double median_s, double flops, const std::vector<double>& samples,
                    std::vector<FigureProblem>& out) {
  if (!samples.empty() && !figures_agree(median(samples), median_s))
    out.push_back({"metrics.iteration_s.median", figure_text(median_s) + " is not the median of its " +
                                                     std::to_string(samples.size()) + " samples (" +
                                                     figure_text(median(samples)) + ")"});
  const auto gpus = plan_gpus(r, out);
  if (!gpus) return;
  const double follows = flops / (*gpus * median_s) / 1e12;
  if (!figures_agree(tflops, follows))
    out.push_back({"metrics.model_tflops_per_gpu",
                   figure_text(tflops) + " does not follow from flops_per_iteration.model / (t·p·d · median iteration) = " +
                       figure_text(follows)});
  const auto peak = machine_peak(r);
  const double fastest = samples.empty() ? median_s : *std::min_element(samples.begin(), samples.end());
  if (peak && fastest < flops / (*gpus * *peak * 1e12))
    out.push_back({samples.empty() ? "metrics.iteration_s.median" : "metrics.iteration_s.samples",
                   "an iteration of " + figure_text(fastest) + " s is faster than its " + figure_text(flops) +
                       " FLOPs allow on " + figure_text(*gpus) + " GPUs at the machine's peak of " +
                       figure_text(*peak) + " TFLOP/s (" + figure_text(flops / (*gpus * *peak * 1e12)) +
                       " s at least): not a real run, or a profile whose peak is below this machine's"});
}

}  // namespace

std::string positive_figure_problem(double x, double max) {
  if (!std::isfinite(x) || x <= 0) return "is not a finite positive number (got " + figure_text(x) + ")";
  if (!std::isnormal(x)) return "is denormal (got " + figure_text(x) + ")";
  if (x > max) return "is above " + figure_text(max) + " (got " + figure_text(x) + ")";
  return "";
}

std::vector<FigureProblem> implausible_figures(const json& r) {
  std::vector<FigureProblem> out;
  const auto tflops = gated_figure(r, {"metrics", "model_tflops_per_gpu"}, kMaxRate, out);
  const auto median_s = gated_figure(r, {"metrics", "iteration_s", "median"}, kMaxSeconds, out);
  const auto samples = valid_samples(r, out);
  if (!out.empty()) return out;  // the figures alone first: their relations mean nothing until each is plausible
  const auto flops = gated_figure(r, {"metrics", "flops_per_iteration", "model"}, std::numeric_limits<double>::max(), out);
  if (flops) check_relations(r, *tflops, *median_s, *flops, *samples, out);
  return out;
}

std::string utilization_above_peak(const RunResult& r) {
  const Throughput t = r.throughput();
  const double mfu = t.mfu.value_or(0), hfu = t.hfu.value_or(0);
  if (!(mfu > 1) && !(hfu > 1)) return "";
  const Machine& m = r.config.machine;
  const auto source = m.sources.find("peak_tflops");
  return "MFU " + percent_text(mfu) + ", HFU " + percent_text(hfu) + " of machine '" + m.name + "''s " +
         figure_text(t.peak_tflops.value_or(0)) + " TFLOP/s " + to_string(r.config.plan.precision) + " peak (" +
         (source == m.sources.end() ? std::string("its source unrecorded") : cut_text(source->second, 200)) +
         "): above 100%, so that peak is below what this machine did and its percentages are not of this hardware; "
         "re-measure it (sweeps/machines/" + m.name + ".json; on the CPU, ptdp train measures it unless "
         "PTDP_MEASURE_PEAK=0, and PTDP_MEASURE_PEAK=again measures it anew, keeping the best rates seen)";
}

std::string mode_contradiction(const json& r, ResultMode claimed) {
  if (!r.is_object()) return "";
  if (const json* mode = json_at_path(r, {"mode"}); mode != nullptr && mode->is_string()) {
    const auto own = parse_result_mode(mode->get<std::string>());
    if (own && *own != claimed)
      return std::string("is filed as ") + to_string(claimed) + " but its result says " + to_string(*own);
  }
  if (claimed == ResultMode::measured && r.contains("projection"))
    return "is filed as measured but carries a projection's provenance (\"projection\")";
  return "";
}

std::string layout_difference(const json& a, const json& b, const std::string& a_name, const std::string& b_name) {
  static constexpr const char* kPlan[] = {"tp",         "pp",        "dp",       "virtual_stages",   "micro_batch",
                                          "global_batch", "schedule", "recompute", "sequence_parallel", "precision"};
  static constexpr const char* kModel[] = {"layers", "hidden", "heads", "kv_heads", "seq_len", "vocab", "ffn_hidden"};
  const auto text = [](const json* v) { return v == nullptr ? std::string("absent") : json_excerpt(*v); };
  std::string out;
  const auto compare_section = [&](const char* section, const auto& keys) {
    for (const char* key : keys) {
      const json *va = json_at_path(a, {section, key}), *vb = json_at_path(b, {section, key});
      if ((va == nullptr && vb == nullptr) || (va != nullptr && vb != nullptr && *va == *vb)) continue;
      out += (out.empty() ? "" : "; ") + std::string(section) + "." + key + " " + text(va) + " in " + a_name + ", " +
             text(vb) + " in " + b_name;
    }
  };
  compare_section("plan", kPlan);
  compare_section("model", kModel);
  return out;
}

}  // namespace ptdp
