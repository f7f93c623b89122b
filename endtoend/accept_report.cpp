// Checks against the bands, and the JSON, Markdown and JUnit reports.
#include "endtoend/accept_report.h"

#include <cstdio>

#include "core/gate/junit.h"
#include "core/results/output_files.h"
#include "core/results/result_io.h"
#include "core/topology/process_place.h"

namespace ptdp::cli {

using nlohmann::json;

const char* to_string(CheckStatus s) {
  switch (s) {
    case CheckStatus::pass: return "pass";
    case CheckStatus::fail: return "fail";
    case CheckStatus::failed: return "failed";
    case CheckStatus::skipped: return "skipped";
    case CheckStatus::unchecked: return "unchecked";
  }
  return "?";
}

namespace {

std::string figure(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

Check check_one(const StepOutcome& step, const std::string& metric, const Machine& machine) {
  Check c;
  c.metric = metric, c.step = step.name, c.seconds = step.seconds;
  if (const auto band = machine.acceptance.find(metric); band != machine.acceptance.end()) c.band = band->second;
  if (const auto p = step.projected.find(metric); p != step.projected.end()) c.projected = p->second;
  const auto value = step.values.find(metric);
  if (step.status == Outcome::skipped) {
    c.reason = step.reason;
  } else if (step.status != Outcome::ok || value == step.values.end()) {
    c.status = CheckStatus::failed;
    c.reason = "step " + step.name + " failed: " + step.reason;
  } else if (c.value = value->second; !c.band) {
    c.status = CheckStatus::unchecked;
    c.reason = "the profile has no band for " + metric;
  } else if (c.band->holds(value->second)) {
    c.status = CheckStatus::pass;
  } else {
    c.status = CheckStatus::fail;
    c.reason = metric + " = " + figure(value->second) + " is below the band's lowest accepted value " +
               figure(c.band->lowest()) + " (expected " + figure(c.band->expected) + ", tolerance " +
               figure(c.band->tolerance) + ")";
  }
  return c;
}

json band_json(const std::optional<AcceptanceBand>& b) {
  if (!b) return nullptr;
  return {{"expected", b->expected}, {"tolerance", b->tolerance}, {"lowest", b->lowest()}, {"source", b->source},
          {"direction", "higher is better"}};
}

std::string optional_figure(const std::optional<double>& v) { return v ? figure(*v) : "-"; }

std::string markdown(const AcceptRun& run) {
  const bool ok = accepted(run.checks);
  std::string md = "# ptdp accept: " + run.machine.name + ": " + (ok ? "PASS" : "FAIL") + "\n\n";
  md += "- machine: " + run.machine.name + " (" + run.machine.gpu + "), " + std::to_string(run.nodes) + " node" +
        (run.nodes == 1 ? "" : "s") + " of " + std::to_string(run.machine.gpus_per_node) + " ranks\n";
  md += "- profile: " + run.profile + "\n- launcher: `" + run.launcher + "`\n";
  md += "- software: " + software_info().dump() + "\n\n";
  md += "A value passes when value >= expected x (1 - tolerance); every metric is higher-is-better.\n\n";
  md += "| metric | step | measured | projected | expected | lowest accepted | status |\n|---|---|---|---|---|---|---|\n";
  for (const Check& c : run.checks)
    md += "| " + c.metric + " | " + c.step + " | " + optional_figure(c.value) + " | " + optional_figure(c.projected) +
          " | " + (c.band ? figure(c.band->expected) : "-") + " | " + (c.band ? figure(c.band->lowest()) : "-") +
          " | " + to_string(c.status) + (c.reason.empty() ? "" : ": " + c.reason) + " |\n";
  md += "\n## Band sources\n\n";
  for (const Check& c : run.checks)
    if (c.band) md += "- " + c.metric + ": " + c.band->source + "\n";
  md += "\n## Steps\n\n";
  for (const StepOutcome& s : run.steps)
    md += "- " + s.name + ": " + to_string(s.status) + (s.reason.empty() ? "" : " (" + s.reason + ")") + ", " +
          figure(s.seconds) + " s; `" + s.command + "`\n";
  return md;
}

std::vector<JunitCase> junit_cases(const std::vector<Check>& checks) {
  std::vector<JunitCase> cases;
  for (const Check& c : checks) {
    JunitCase j;
    j.name = c.metric, j.classname = "accept." + c.step, j.seconds = c.seconds;
    if (c.status == CheckStatus::fail || c.status == CheckStatus::failed) j.failure = c.reason;
    if (c.status == CheckStatus::skipped) j.skipped = c.reason;
    j.output = "measured " + optional_figure(c.value) + ", projected " + optional_figure(c.projected) +
               (c.band ? ", band: expected " + figure(c.band->expected) + " lowest " + figure(c.band->lowest()) +
                             " (" + c.band->source + ")"
                       : ", no band");
    cases.push_back(std::move(j));
  }
  return cases;
}

}  // namespace

std::vector<Check> check_bands(const std::vector<StepOutcome>& steps, const Machine& machine) {
  std::vector<Check> checks;
  for (const StepOutcome& s : steps)
    for (const std::string& metric : s.metrics) checks.push_back(check_one(s, metric, machine));
  return checks;
}

bool accepted(const std::vector<Check>& checks) {
  for (const Check& c : checks)
    if (c.status == CheckStatus::fail || c.status == CheckStatus::failed) return false;
  return true;
}

std::vector<std::filesystem::path> accept_report_files(const std::filesystem::path& dir) {
  return {dir / "accept.json", dir / "accept.md", dir / "accept-junit.xml"};
}

json accept_json(const AcceptRun& run) {
  json steps = json::array(), checks = json::array();
  for (const StepOutcome& s : run.steps)
    steps.push_back({{"name", s.name}, {"status", to_string(s.status)}, {"reason", s.reason},
                     {"seconds", s.seconds}, {"command", s.command}, {"log", s.log.string()},
                     {"values", s.values}, {"projected", s.projected}, {"details", s.details}});
  for (const Check& c : run.checks)
    checks.push_back({{"metric", c.metric}, {"step", c.step}, {"status", to_string(c.status)},
                      {"value", or_null(c.value)}, {"projected", or_null(c.projected)}, {"band", band_json(c.band)},
                      {"reason", c.reason}});
  return {{"schema", "ptdp.accept/1"}, {"verdict", accepted(run.checks) ? "pass" : "fail"},
          {"profile", run.profile}, {"machine", to_json(run.machine)}, {"nodes", run.nodes},
          {"launcher", run.launcher}, {"host", this_process().host}, {"software", software_info()},
          {"steps", steps}, {"checks", checks}};
}

void write_accept_reports(const AcceptRun& run, const std::filesystem::path& dir) {
  const auto files = accept_report_files(dir);
  OutputFiles out;
  out.add(files[0], accept_json(run));
  out.add_text(files[1], markdown(run));
  out.add_text(files[2], junit_xml("ptdp accept " + run.machine.name, junit_cases(run.checks)));
  out.commit();
}

}  // namespace ptdp::cli
