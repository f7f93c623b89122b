// `ptdp calibrate BENCH.json... --machine NAME --out FILE`: benchmark output
// of ptdp's microbenchmarks to the calibration table `ptdp project
// --calibration` reads, with a short table of what ran and how close to the
// machine's peak it came.
#include <cstdio>
#include <algorithm>
#include <memory>

#include "core/config/config.h"
#include "core/results/result_io.h"
#include "core/sim/calibrate.h"
#include "core/sim/device_rates.h"
#include "endtoend/cli_common.h"
#include "endtoend/commands.h"

namespace ptdp::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string machine, out, name;
};

void print_summary(const Calibration& c, const Machine& m) {
  const double peak = m.peak_for(c.precision);
  std::printf("%-26s %8s  %-34s %s\n", "what ran", "samples", "achieved", "of the profile's datasheet rate");
  if (!c.gemms.empty()) {
    std::vector<double> tflops;
    for (const auto& g : c.gemms) tflops.push_back(g.shape.flops() / g.seconds / 1e12);
    std::sort(tflops.begin(), tflops.end());
    std::printf("%-26s %8zu  %8.3f .. %8.3f TFLOP/s         %.0f%% .. %.0f%% of %g (%s)\n", "GEMM", tflops.size(),
                tflops.front(), tflops.back(), peak > 0 ? 100 * tflops.front() / peak : 0,
                peak > 0 ? 100 * tflops.back() / peak : 0, peak, c.precision.c_str());
  }
  if (c.memory_bandwidth_gbs > 0)
    std::printf("%-26s %8s  %8.1f GB/s (bytes over time)     %.0f%% of %g GB/s\n", "memory-bound kernels", "",
                c.memory_bandwidth_gbs, 100 * c.memory_bandwidth_gbs / m.memory_bandwidth_gbs, m.memory_bandwidth_gbs);
  if (c.flash_attention_tflops > 0)
    std::printf("%-26s %8s  %8.3f TFLOP/s (mean)            %.0f%%\n", "fused attention", "", c.flash_attention_tflops,
                peak > 0 ? 100 * c.flash_attention_tflops / peak : 0);
  for (const auto& [ranks, slowdown] : c.host_sharing)
    std::printf("%-26s %8s  %8.2fx the time of a lone rank\n", ("host shared by " + std::to_string(ranks) + " ranks").c_str(),
                "", slowdown);
  for (const auto& [key, r] : c.collectives) {
    const bool intra = key.rfind("intra_node", 0) == 0;
    const double link = (intra ? m.intra_node.bandwidth_gbs : m.inter_node.bandwidth_gbs);
    std::printf("%-26s %8s  alpha %7.2f us, busbw %8.2f GB/s   %.0f%% of %g GB/s\n", key.c_str(), "", r.alpha_us,
                r.busbw_gbs, link > 0 ? 100 * r.busbw_gbs / link : 0, link);
  }
}

int run(const CalibrateArgs& a) {
  std::vector<OutputOption> inputs;
  for (const std::string& f : a.files) inputs.push_back({"FILE", f});
  if (const ConfigErrors bad = check_outputs({{"--out", a.out}}, inputs); !bad.empty()) {
    print_refused("calibrate", bad);
    return kExitRefused;
  }
  try {
    const Machine machine = load_machine(a.machine, default_machines_dir());
    std::vector<std::filesystem::path> files(a.files.begin(), a.files.end());
    Calibration c = calibrate(files, machine.name);
    c.name = a.name.empty() ? std::filesystem::path(a.out).stem().string() : a.name;
    print_summary(c, machine);
    if (!a.out.empty()) write_json_atomic(a.out, c.to_json());
    return kExitOk;
  } catch (const ConfigRefused& e) {
    std::fprintf(stderr, "ptdp calibrate: %s\n", e.errors().front().message.c_str());
    return kExitRefused;
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "ptdp calibrate: %s\n", e.what());
    return kExitRefused;
  }
}

}  // namespace

Command add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand("calibrate", "Turn microbenchmark JSON (ptdp_bench_kernels, "
                                                  "ptdp_bench_collectives) into a calibration table for `ptdp project`.");
  sub->add_option("files", a->files, "Google Benchmark JSON files (--benchmark_out_format=json)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--machine", a->machine, "Machine profile the measurements calibrate")->required();
  sub->add_option("--out", a->out, "Calibration JSON to write");
  sub->add_option("--name", a->name, "Its name in projections (default: the file stem)");
  return {sub, [a] { return run(*a); }};
}

}  // namespace ptdp::cli
