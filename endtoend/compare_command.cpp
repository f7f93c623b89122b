// `ptdp compare BASE.json NEW.json`: the regression gate for CI. Matches the
// results of two files (runs or sweeps) by configuration, prints a table of
// deltas with the noise test's p-value, writes JUnit XML for CI, and exits 1
// when throughput fell or iteration time grew too much beyond noise; 2 when it
// cannot judge (a figure missing, a failed point, nothing matched).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/gate/compare.h"
#include "core/gate/junit.h"
#include "core/results/output_files.h"
#include "core/results/result_io.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"
#include "endtoend/gate_options.h"

namespace ptdp::cli {

namespace {

struct CompareArgs {
  std::string base, now, out, junit;
  double threshold = 5, alpha = kDefaultAlpha;
};

// Characters (UTF-8 code points) in `s`, for aligning "—", "→" and "Δ".
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

std::string pad(const std::string& s, std::size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(const MetricDelta& d) { return d.delta_pct ? fmt("%+.1f%%", *d.delta_pct) : "—"; }

std::string tflops_cell(const MetricDelta& d) {
  if (!d.base && !d.now) return "—";
  const std::string b = d.base ? fmt("%.1f", *d.base) : "—", n = d.now ? fmt("%.1f", *d.now) : "—";
  return b + " → " + n + " (" + pct(d) + ")";
}

// "0.0004 (10/10)": the noise test's p and the samples a side; "— (1/1)" untested.
std::string noise_cell(const NoiseCheck& n) {
  const std::string counts = " (" + std::to_string(n.base_samples) + "/" + std::to_string(n.new_samples) + ")";
  return (n.p_value ? fmt("%.2g", *n.p_value) : "—") + counts;
}

// BASE's interquartile range and upper fence: "0.0084–0.0127 (0.019)".
std::string spread_cell(const NoiseCheck& n) {
  if (!n.base_spread) return "—";
  const Spread& s = *n.base_spread;
  return fmt("%.4g", s.q1) + "–" + fmt("%.4g", s.q3) + " (" + fmt("%.4g", s.upper_fence) + ")";
}

std::string verdict(const CompareRow& r) {
  if (r.regressed) return r.note.empty() ? "REGRESSION" : "REGRESSION (" + r.note + ")";
  return r.beyond_threshold ? "within noise" : "";
}

void print_table(const Comparison& c) {
  std::vector<std::vector<std::string>> lines = {{"config", "TFLOP/s/GPU base → new (Δ%)", "iter s Δ%",
                                                  "p (samples)", "base IQR s (fence)", "memory Δ%", "bubble Δ%", ""}};
  for (const auto& r : c.rows)
    lines.push_back({r.label, tflops_cell(r.tflops), pct(r.iteration_s), noise_cell(r.noise), spread_cell(r.noise),
                     pct(r.memory), pct(r.bubble), verdict(r)});
  std::vector<std::size_t> widths(lines.front().size(), 0);
  for (const auto& l : lines)
    for (std::size_t i = 0; i < l.size(); ++i) widths[i] = std::max(widths[i], width(l[i]));
  for (const auto& l : lines) {
    std::string text;
    for (std::size_t i = 0; i < l.size(); ++i) text += pad(l[i], widths[i] + 2);
    text.erase(text.find_last_not_of(' ') + 1);
    std::printf("%s\n", text.c_str());
  }
}

// The figures behind a row's verdict, in one line.
std::string row_figures(const CompareRow& r, const Comparison& c) {
  std::string text = "TFLOP/s/GPU " + tflops_cell(r.tflops) + ", median iteration " +
                     (r.iteration_s.base ? fmt("%.4g", *r.iteration_s.base) : "—") + " → " +
                     (r.iteration_s.now ? fmt("%.4g", *r.iteration_s.now) : "—") + " s (" + pct(r.iteration_s) +
                     ", threshold " + fmt("%g%%", c.threshold_pct) + "); ";
  if (r.noise.p_value)
    text += "one-sided Mann-Whitney p = " + fmt("%.3g", *r.noise.p_value) + " (alpha " + fmt("%g", c.alpha) + ", " +
            std::to_string(r.noise.base_samples) + " vs " + std::to_string(r.noise.new_samples) +
            " samples); NEW median " + (r.noise.beyond_spread ? "above" : "within") +
            " BASE's spread: interquartile " + spread_cell(r.noise) + " s";
  else
    text += r.noise.not_tested;
  return text + (r.note.empty() ? "" : "; " + r.note);
}

// One test case per matched pair (failed: it regressed), and one skipped case
// per configuration the gate could not judge.
std::vector<JunitCase> junit_cases(const Comparison& c) {
  std::vector<JunitCase> cases;
  for (const auto& r : c.rows) {
    JunitCase k{r.label + " (" + to_string(r.mode) + ")", "compare", 0, std::nullopt, std::nullopt, row_figures(r, c)};
    if (r.regressed) k.failure = "regression: " + k.output;
    cases.push_back(k);
  }
  for (const auto& m : c.mode_differs)
    cases.push_back({m.label, "compare", 0, std::nullopt,
                     std::string("not compared: ") + to_string(m.base_mode) + " in BASE, " + to_string(m.new_mode) +
                         " in NEW",
                     ""});
  for (const auto& d : c.only_in_base)
    cases.push_back({d, "compare", 0, "dropped: in BASE, not in NEW", std::nullopt, ""});
  for (const auto& u : c.unusable) {
    const auto cut = u.find("): ");  // "LABEL (MODE): WHY"
    cases.push_back({u.substr(0, cut == std::string::npos ? u.size() : cut + 1), "compare", 0, std::nullopt,
                     "cannot judge: " + (cut == std::string::npos ? u : u.substr(cut + 3)), ""});
  }
  return cases;
}

void print_summary(const Comparison& c) {
  for (const auto& s : c.only_in_base) std::printf("only in BASE: %s\n", s.c_str());
  for (const auto& s : c.only_in_new) std::printf("only in NEW: %s\n", s.c_str());
  for (const auto& m : c.mode_differs)
    std::printf("mode differs: %s (BASE %s, NEW %s): not compared\n", m.label.c_str(), to_string(m.base_mode),
                to_string(m.new_mode));
  for (const auto& u : c.unusable) std::printf("not comparable: %s\n", u.c_str());
  if (!c.unusable.empty()) std::printf("NO VERDICT: ");  // the counts below are not a pass
  std::printf("%zu matched, %d regressed beyond %g%%; %zu only in base, %zu only in new", c.rows.size(), c.regressions,
              c.threshold_pct, c.only_in_base.size(), c.only_in_new.size());
  if (!c.mode_differs.empty()) std::printf("; %zu mode differs", c.mode_differs.size());
  if (!c.unusable.empty()) std::printf("; %zu not comparable (failed, unmeasured or malformed)", c.unusable.size());
  std::printf("; noise test at alpha %g\n", c.alpha);
}

// The verdict: 2 when the gate cannot judge (modes, unusable pairs, nothing
// matched), 1 when NEW dropped an entry of BASE or a pair regressed, else 0.
int exit_status(const Comparison& c, const CompareArgs& args) {
  if (!c.mode_differs.empty() || !c.unusable.empty() || !c.only_in_base.empty())
    std::fprintf(stderr, "ptdp compare: BASE is %s, NEW is %s\n", args.base.c_str(), args.now.c_str());
  for (const auto& m : c.mode_differs)
    std::fprintf(stderr, "ptdp compare: %s is %s in BASE but %s in NEW; a %s result is never compared with a %s one\n",
                 m.label.c_str(), to_string(m.base_mode), to_string(m.new_mode), to_string(m.base_mode), to_string(m.new_mode));
  if (!c.mode_differs.empty()) return kExitRefused;
  for (const auto& u : c.unusable) std::fprintf(stderr, "ptdp compare: cannot judge %s\n", u.c_str());
  if (!c.unusable.empty()) return kExitRefused;  // a failed or unmeasured point is never "0 regressed"
  if (c.rows.empty()) {  // a gate that compared nothing must not pass
    std::fprintf(stderr, "ptdp compare: no configuration of NEW matches one of BASE; nothing was compared\n");
    return kExitRefused;
  }
  for (const auto& d : c.only_in_base)  // a point that vanished is never "0 regressed" either
    std::fprintf(stderr, "ptdp compare: %s is in BASE but not in NEW: dropped\n", d.c_str());
  return c.regressions > 0 || !c.only_in_base.empty() ? kExitFailed : kExitOk;
}

int run(const CompareArgs& args) {
  if (const ConfigErrors bad = check_outputs({{"--out", args.out}, {"--junit", args.junit}},
                                             {{"BASE", args.base}, {"NEW", args.now}});
      !bad.empty()) {
    print_refused("compare", bad);
    return kExitRefused;
  }
  Comparison c;
  try {
    c = compare_results(load_compare_entries(args.base), load_compare_entries(args.now), args.threshold, args.alpha);
  } catch (const std::runtime_error& e) {  // an unreadable or malformed file, named
    std::fprintf(stderr, "ptdp compare: %s\n", e.what());
    return kExitRefused;
  }
  print_table(c);
  print_summary(c);
  try {
    OutputFiles files;  // the JSON and the JUnit XML together, or neither
    if (!args.out.empty()) {
      nlohmann::json j = to_json(c);
      j["base"] = args.base;
      j["new"] = args.now;
      files.add(args.out, j);
    }
    if (!args.junit.empty()) files.add_text(args.junit, junit_xml("ptdp compare", junit_cases(c)));
    files.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptdp compare: writing the outputs: %s\n", e.what());
    return kExitFailed;
  }
  return exit_status(c, args);
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand("compare", "Compare two result files (runs or sweeps) and fail on a throughput "
                                                "regression: the CI gate.");
  sub->footer(
      "Inputs: ptdp.result/2 or ptdp.sweep-results/1 files. Matched by configuration: sweep points by (sweep name, "
      "mode, overrides), single runs by (mode, model, plan, machine name). A pair regresses when model TFLOP/s per "
      "GPU drops, or median iteration time grows, by more than --threshold percent; memory and bubble are reported, "
      "not gated. An entry of BASE that NEW lacks was dropped and fails the gate; one only in NEW is listed. A "
      "configuration measured on one side and projected on the other is never compared. Neither file may repeat a "
      "configuration, nor file a result under another mode than its own.\nPlausibility: each side's TFLOP/s (at most "
      "1e6), median iteration and samples (at most 1e6 s) must be finite, positive and not denormal, the median its "
      "samples' median, the TFLOP/s flops_per_iteration.model / (t·p·d · median), and no iteration faster than those "
      "FLOPs allow at the machine's peak; the pair's layouts (plan sizes, schedule, recompute, precision; model shape) "
      "and labels must agree, and overrides that differ only in JSON types are a change, not a new point.\nNoise: a pair regresses only when it is beyond the threshold and a "
      "one-sided Mann-Whitney U test on the iteration-time samples (metrics.iteration_s.samples; exact up to 20 "
      "a side) gives p <= --alpha and NEW's median is above BASE's upper fence (q3 + 1.5 IQR). With too few samples for p to reach alpha (1/C(m+n,n): 3 a side at 0.05) or a "
      "projection's single value, the threshold alone decides and the row says so. --junit writes one test case "
      "per configuration (failed: regressed or dropped; skipped: cannot be judged).\nExit status: 0 no regression, "
      "1 a regression or a dropped entry, 2 unreadable or malformed input, a configuration whose mode differs, a "
      "figure that is not plausible on either side, layouts or labels that differ, re-typed overrides, a sweep point "
      "that failed or has no result, or nothing matched.");
  sub->add_option("BASE", args->base, "The reference result file")->required()->check(CLI::ExistingFile);
  sub->add_option("NEW", args->now, "The result file to check against BASE")->required()->check(CLI::ExistingFile);
  add_gate_options(*sub, args->threshold, args->alpha);
  sub->add_option("--out", args->out, "Write the comparison JSON here (ptdp.compare/2)");
  sub->add_option("--junit", args->junit, "Write JUnit XML here: one test case per matched configuration");
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
