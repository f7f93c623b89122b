// `ptdp compare BASE.json NEW.json`: the regression gate for CI. Matches the
// results of two files (runs or sweeps) by configuration, prints a table of
// deltas, and exits 1 when throughput fell or iteration time grew too much;
// 2 when it cannot judge (a figure missing, a failed point, nothing matched).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics/compare.h"
#include "core/metrics/result_io.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct CompareArgs {
  std::string base, now, out;
  double threshold = 5;
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

void print_table(const Comparison& c) {
  std::vector<std::vector<std::string>> lines = {{"config", "TFLOP/s/GPU base → new (Δ%)", "iter s Δ%", "memory Δ%",
                                                  "bubble Δ%", ""}};
  for (const auto& r : c.rows)
    lines.push_back({r.label, tflops_cell(r.tflops), pct(r.iteration_s), pct(r.memory), pct(r.bubble),
                     r.regressed ? (r.note.empty() ? "REGRESSION" : "REGRESSION (" + r.note + ")") : ""});
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
  std::printf("\n");
}

int exit_status(const Comparison& c) {
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
  return c.regressions > 0 ? kExitFailed : kExitOk;
}

int run(const CompareArgs& args) {
  if (const ConfigErrors bad = check_outputs({{"--out", args.out}}); !bad.empty()) {
    print_refused("compare", bad);
    return kExitRefused;
  }
  Comparison c;
  try {
    c = compare_results(load_compare_entries(args.base), load_compare_entries(args.now), args.threshold);
  } catch (const std::runtime_error& e) {  // an unreadable or malformed file, named
    std::fprintf(stderr, "ptdp compare: %s\n", e.what());
    return kExitRefused;
  }
  print_table(c);
  print_summary(c);
  if (!args.out.empty()) {
    nlohmann::json j = to_json(c);
    j["base"] = args.base;
    j["new"] = args.now;
    try {
      write_json_atomic(args.out, j);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ptdp compare: writing %s: %s\n", args.out.c_str(), e.what());
      return kExitFailed;
    }
  }
  return exit_status(c);
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
      "not gated. Entries on one side only are listed, not errors. A configuration measured on one side and projected "
      "on the other is never compared.\nExit status: 0 no regression, 1 a regression, 2 unreadable or malformed "
      "input, a configuration whose mode differs, a gated figure missing, null, non-numeric, non-finite or not "
      "positive on either side, a sweep point that failed or has no result, or nothing matched.");
  sub->add_option("BASE", args->base, "The reference result file")->required()->check(CLI::ExistingFile);
  sub->add_option("NEW", args->now, "The result file to check against BASE")->required()->check(CLI::ExistingFile);
  sub->add_option("--threshold", args->threshold, "Allowed drop of TFLOP/s or growth of iteration time, in percent")
      ->check(CLI::Validator(
          [](const std::string& text) {
            double v = 0;  // NaN and infinity pass CLI::PositiveNumber; a gate needs a real bound
            if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v <= 0)
              return "must be a finite positive number of percent (got " + text + ")";
            return std::string();
          },
          "POSITIVE"))
      ->capture_default_str();
  sub->add_option("--out", args->out, "Write the comparison JSON here (ptdp.compare/1)");
  return {sub, [args] { return run(*args); }};
}

}  // namespace ptdp::cli
