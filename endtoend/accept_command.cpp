// `ptdp accept --machine PROFILE [--nodes N] [--out DIR] [--launcher T]`: a
// vendor's acceptance of a machine in one command. Every input is checked
// before any step runs; the steps run in order (accept_suite.h), each figure is
// checked against the profile's band, and the reports are written together.
// Exit: 0 every band holds, 1 a band or a step failed, 2 input refused.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "core/runtime/backend.h"
#include "endtoend/accept_report.h"
#include "endtoend/accept_suite.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"
#include "endtoend/option_ranges.h"

namespace ptdp::cli {

namespace {

struct AcceptArgs {
  std::string machine;       // a profile name, or a profile file (a path ending in .json)
  std::string machines_dir;  // where a name is looked up (default: the shipped profiles)
  int nodes = 1;
  std::string out;           // default out/accept/<profile name>
  std::string launcher = "mpirun";
};

bool names_a_file(const std::string& profile) {
  return profile.find('/') != std::string::npos || std::filesystem::path(profile).extension() == ".json";
}

// The profile, or its problems appended to `errors`.
std::optional<Machine> load_profile(const AcceptArgs& a, ConfigErrors& errors) {
  try {
    if (names_a_file(a.machine)) return machine_from_json(parse_json_file(a.machine, "--machine"), "--machine");
    return load_machine(a.machine, a.machines_dir.empty() ? default_machines_dir() : std::filesystem::path(a.machines_dir));
  } catch (const ConfigRefused& e) {
    for (const ConfigError& err : e.errors()) errors.push_back(err);
  }
  return std::nullopt;
}

// Every input problem, found before anything runs; `machine` and `launcher` set when usable.
ConfigErrors check_accept_args(AcceptArgs& a, std::optional<Machine>& machine, std::optional<Launcher>& launcher) {
  ConfigErrors e;
  try {
    launcher = Launcher::parse(a.launcher, PTDP_MPIEXEC);
  } catch (const LauncherRefused& err) {
    e.push_back({"--launcher", std::string("--launcher: ") + err.what()});
  }
  machine = load_profile(a, e);
  if (!machine) return e;
  if (saturating_product({a.nodes, machine->gpus_per_node}) > kMaxRanks)
    e.push_back({"--nodes", "--nodes=" + std::to_string(a.nodes) + " of " + std::to_string(machine->gpus_per_node) +
                                " ranks each is more than the " + std::to_string(kMaxRanks) + " ranks ptdp runs"});
  if (machine->acceptance.empty())
    e.push_back({"--machine", "--machine=" + a.machine + ": profile " + machine->name +
                                  " has no acceptance bands (an \"acceptance\" object of {\"expected\", "
                                  "\"tolerance\", \"source\"} per metric); nothing to accept against"});
  if (const std::string why = device_unavailable(machine->device); !why.empty())
    e.push_back({"--machine", "--machine=" + a.machine + ": its device " + device_name(machine->device) +
                                  " cannot run here: " + why});
  if (a.out.empty()) a.out = (std::filesystem::path("out") / "accept" / machine->name).string();
  std::vector<OutputOption> outputs;
  for (const auto& f : accept_report_files(a.out)) outputs.push_back({"--out", f.string()});
  for (auto& err : check_outputs(outputs)) e.push_back(std::move(err));
  return e;
}

// "[3/6] collectives_intra: allreduce_busbw_gbs_intra 4.1 (band >= 2) pass"
void print_progress(std::size_t index, std::size_t total, const StepOutcome& step, const std::vector<Check>& checks) {
  std::string what = to_string(step.status);
  if (step.status != Outcome::ok) what += ": " + step.reason.substr(0, 160);
  for (const Check& c : checks) {
    if (!c.value) continue;
    char text[200];
    std::snprintf(text, sizeof text, "%s %.4g", c.metric.c_str(), *c.value);
    what = text;
    if (c.projected) std::snprintf(text, sizeof text, " (projected %.4g)", *c.projected), what += text;
    if (c.band) std::snprintf(text, sizeof text, ", band >= %.4g", c.band->lowest()), what += text;
    what += std::string(": ") + to_string(c.status);
  }
  std::printf("[%zu/%zu] %s: %s (%.1f s)\n", index + 1, total, step.name.c_str(), what.c_str(), step.seconds);
  std::fflush(stdout);
}

int run(AcceptArgs a) {
  std::optional<Machine> machine;
  std::optional<Launcher> launcher;
  if (const ConfigErrors errors = check_accept_args(a, machine, launcher); !errors.empty()) {
    print_refused("accept", errors);
    return kExitRefused;
  }
  const std::filesystem::path out(a.out);
  AcceptContext ctx{*machine, a.nodes, *launcher, out / "steps"};
  std::filesystem::create_directories(ctx.work);
  const std::vector<StepSpec> specs = accept_steps(ctx);
  std::printf("ptdp accept %s: %zu steps on %d node%s of %d ranks -> %s\n", machine->name.c_str(), specs.size(),
              a.nodes, a.nodes == 1 ? "" : "s", machine->gpus_per_node, a.out.c_str());
  AcceptRun report{*machine, a.machine, a.nodes, launcher->text(), {}, {}};
  run_accept_steps(specs, [&](StepOutcome step) {
    if (step.name == "weak_scaling")
      for (const StepOutcome& s : report.steps)
        if (s.name == "train") finish_weak_scaling(s, step);
    print_progress(report.steps.size(), specs.size(), step, check_bands({step}, *machine));
    report.steps.push_back(std::move(step));
  });
  report.checks = check_bands(report.steps, *machine);
  write_accept_reports(report, out);
  const bool ok = accepted(report.checks);
  std::printf("ptdp accept %s: %s; reports in %s (accept.md, accept.json, accept-junit.xml)\n", machine->name.c_str(),
              ok ? "PASS, every band holds" : "FAIL", a.out.c_str());
  return ok ? kExitOk : kExitFailed;
}

}  // namespace

Command add_accept_command(CLI::App& app) {
  auto a = std::make_shared<AcceptArgs>();
  CLI::App* sub = app.add_subcommand(
      "accept", "Acceptance of a machine in one command: GEMM ceiling, attention, all-reduce within and across nodes, "
                "training throughput and weak scaling, each checked against the profile's acceptance bands.");
  sub->add_option("--machine", a->machine, "Machine profile: a name in --machines-dir, or a profile file (*.json)")
      ->required();
  sub->add_option("--machines-dir", a->machines_dir, "Folder of machine profiles (default: the shipped ones)");
  sub->add_option("--nodes", a->nodes, "Nodes to run the cross-node steps on (1: those steps are skipped)")
      ->check(integer_in(1, kMaxAcceptNodes));
  sub->add_option("--out", a->out, "Report folder (default out/accept/PROFILE)");
  sub->add_option("--launcher", a->launcher, "How multi-rank steps start: mpirun (default), srun or a template "
                                             "with {ranks} {nodes} {ranks_per_node} {gpus_per_node} {cmd}");
  return {sub, [a] { return run(*a); }};
}

}  // namespace ptdp::cli
