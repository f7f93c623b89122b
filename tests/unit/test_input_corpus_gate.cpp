// Replays the gate's refused inputs (tests/corpus/README.md): Google Benchmark
// files `ptdp calibrate` reads, calibration tables, pairs `ptdp compare`
// judges, Slurm manifests `sweep --collect` reads and files `ptdp history`
// reads. Every file is refused by its reader with the message held here (a
// file without one, or a message without its file, fails), and every reader
// refuses the files of corpus/any. The last tests run the commands on a few.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "core/config/json_read.h"
#include "core/gate/compare.h"
#include "core/gate/history.h"
#include "core/sim/calibrate.h"
#include "core/sim/calibration.h"
#include "core/sweep/slurm_folder.h"
#include "tests/cli_test_util.h"
#include "tests/corpus_replay.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path gate_corpus() { return test::corpus_dir(); }

// Each reader as its command calls it; a refusal is an exception.
using GateReader = std::function<void(const fs::path&)>;

void read_benchmarks(const fs::path& f) { calibrate(std::vector<fs::path>{f}, "cpu-host"); }

void read_calibration_table(const fs::path& f) { Calibration::load(f); }

// {"BASE": ..., "NEW": ...} judged as `ptdp compare` judges two files: what it
// exits 2 on (a mode, a pair it cannot judge, nothing matched) or 1 on (a
// point dropped) is thrown; what it passes is accepted.
void judge_compare_pair(const fs::path& f) {
  const json doc = read_json_file(f);
  const JsonAt pair(doc, f.string());
  const Comparison c = compare_results(compare_entries(pair.at("BASE").value(), f.string() + " BASE"),
                                       compare_entries(pair.at("NEW").value(), f.string() + " NEW"), 5);
  if (!c.mode_differs.empty()) throw std::runtime_error("mode differs: " + c.mode_differs.front().label);
  if (!c.unusable.empty()) throw std::runtime_error(c.unusable.front());
  if (c.rows.empty()) throw std::runtime_error("nothing was compared");
  if (!c.only_in_base.empty()) throw std::runtime_error(c.only_in_base.front() + " is in BASE but not in NEW: dropped");
}

void read_manifest(const fs::path& f) {
  static const Sweep sweep =
      load_sweep(fs::path(PTDP_SOURCE_DIR) / "sweeps" / "cpu_microbatch.json", default_machines_dir(), nullptr);
  manifest_points(read_json_file(f), f.string(), sweep);
}

// One file as a folder of one: read, then the history of its default metric.
void read_history_file(const fs::path& f) {
  build_history(load_history_files({f}), "model_tflops_per_gpu", 5, kDefaultAlpha);
}

const std::map<std::string, GateReader>& gate_readers() {
  static const std::map<std::string, GateReader> all = {
      {"benchmarks", read_benchmarks},       {"calibration_tables", read_calibration_table},
      {"compare_pairs", judge_compare_pair}, {"slurm_manifest", read_manifest},
      {"history", read_history_file}};
  return all;
}

// The message of the refusal; "" when the input was accepted. `ptdp history`
// turns std::invalid_argument (a metric no file has) into exit 2 as well.
std::string gate_refusal(const GateReader& read, const fs::path& f) {
  try {
    read(f);
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// "reader/file.json" -> a piece of the message its refusal must hold.
const std::map<std::string, std::string>& gate_expected() {
  static const std::map<std::string, std::string> all = {
      {"benchmarks/real_time_zero.json", "/benchmarks/0/real_time: is not a finite positive number (got 0) (time_unit ms)"},
      {"benchmarks/real_time_negative.json", "/benchmarks/0/real_time: is not a finite positive number (got -1.5)"},
      {"benchmarks/real_time_denormal.json", "/benchmarks/0/real_time: is denormal (got 1e-310) (time_unit ns)"},
      {"benchmarks/real_time_denormal_in_seconds.json", "/benchmarks/0/real_time: is denormal in seconds (time_unit ns)"},
      {"benchmarks/real_time_huge.json", "/benchmarks/0/real_time: is above 1e+06 (got 1e+300) (time_unit s)"},
      {"benchmarks/real_time_nan.json", "/benchmarks/0/real_time: is missing"},
      {"benchmarks/time_unit_unknown.json",
       "/benchmarks/0/time_unit: must be a time unit of Google Benchmark: ns, us, ms or s (got \"fortnights\")"},
      {"benchmarks/time_unit_missing.json", "/benchmarks/0/time_unit: is missing"},
      {"benchmarks/benchmarks_empty.json", "benchmarks_empty.json: /benchmarks: holds no benchmark run"},
      {"benchmarks/other_machine.json",
       "/context/ptdp_machine: the benchmarks ran for machine \"a100-80gb\", not --machine cpu-host"},
      {"benchmarks/machine_missing.json", "machine_missing.json: /context/ptdp_machine: is missing"},
      {"benchmarks/context_missing.json", "context_missing.json: has no \"context\""},
      {"benchmarks/gemm_m_zero.json", "/benchmarks/0/m: is not a finite positive number (got 0)"},
      {"benchmarks/gemm_k_string.json", "/benchmarks/0/k: must be a number (got \"64\")"},
      {"benchmarks/concurrent_not_digits.json", "/context/ptdp_concurrent: a count of copies in [1, 1048576] expected"},
      {"benchmarks/no_measurement.json", "holds no measurement"},
      {"benchmarks/attention_without_heads.json", "/benchmarks/1/heads: is missing"},
      {"benchmarks/attention_flash_not_a_flag.json", "/benchmarks/0/flash: must be 0 or 1 (got 0.5)"},
      {"benchmarks/runs_not_objects.json", "/benchmarks/0: must be a JSON object (got 5)"},
      {"benchmarks/bus_factor_above_two.json", "/benchmarks/0/bus_factor: is above 2 (got 3)"},
      {"calibration_tables/gemm_seconds_denormal.json", "/gemms/0/seconds: is denormal (got 1e-310)"},
      {"calibration_tables/gemm_seconds_huge.json", "/gemms/0/seconds: must be at most 1000000"},
      {"calibration_tables/bandwidth_denormal.json", "/memory_bandwidth_gbs: is denormal (got 1e-310)"},
      {"calibration_tables/host_sharing_denormal.json", "/host_sharing/2: is denormal (got 1e-310)"},
      {"calibration_tables/machine_missing.json", "machine_missing.json: /machine: is missing"},
      {"calibration_tables/machine_with_slash.json", "/machine: machine name must be a file name"},
      {"calibration_tables/no_measurement.json", "no_measurement.json: holds no measurement"},
      {"compare_pairs/dropped_point.json", "fig:b (projected) is in BASE but not in NEW: dropped"},
      {"compare_pairs/repeated_point.json", "NEW: /points/2: repeats the configuration and mode of /points/0"},
      {"compare_pairs/retyped_override.json", "fig:b (projected): re-typed: BASE /points/1 and NEW /points/1"},
      {"compare_pairs/retagged_label.json", "fig:b (projected): re-tagged: labelled \"fig:renamed\" in NEW"},
      {"compare_pairs/layout_differs.json", "fig:b (projected): layout differs: plan.dp 1 in BASE, 2 in NEW"},
      {"compare_pairs/single_results_of_two_layouts.json", "layout differs: plan.micro_batch 1 in BASE, 4 in NEW"},
      {"compare_pairs/projected_as_measured.json",
       "NEW: /points/0/mode: is filed as measured but its result says projected"},
      {"compare_pairs/projection_provenance_as_measured.json",
       "NEW: /mode: is filed as measured but carries a projection's provenance"},
      {"compare_pairs/tflops_denormal.json", "NEW metrics.model_tflops_per_gpu is denormal (got 1e-310)"},
      {"compare_pairs/iteration_huge.json", "NEW metrics.iteration_s.median is above 1e+06 (got 1e+300)"},
      {"compare_pairs/median_not_of_samples.json", "NEW metrics.iteration_s.median 2 is not the median of its 3 samples"},
      {"compare_pairs/faster_than_peak.json", "BASE metrics.iteration_s.median an iteration of 2 s is faster than"},
      {"compare_pairs/tflops_not_from_flops.json", "NEW metrics.model_tflops_per_gpu 300 does not follow from"},
      {"compare_pairs/metrics_key_repeated.json", "the key \"model_tflops_per_gpu\" appears twice in one object"},
      {"slurm_manifest/not_a_manifest.json", "not_a_manifest.json: is not a manifest of ptdp Slurm jobs"},
      {"slurm_manifest/other_sweep.json", "other_sweep.json: holds the Slurm jobs of sweep \"figure13\", not "
                                          "\"cpu_microbatch\""},
      {"slurm_manifest/index_outside.json", "/points/0/index: point 99 is not a point of"},
      {"slurm_manifest/index_negative.json", "/points/0/index: point -1 is not a point of"},
      {"slurm_manifest/index_repeated.json", "/points/2/index: point 0 is listed twice (first at /points/0)"},
      {"slurm_manifest/index_string.json", "/points/0/index: must be an integer (got \"0\")"},
      {"slurm_manifest/points_number.json", "/points: must be a JSON array (got 5)"},
      {"slurm_manifest/identity_missing.json", "identity_missing.json: /identity: is missing"},
      {"history/sweep_definition.json", "sweep_definition.json: not a ptdp result: schema \"ptdp.sweep/1\""},
      {"history/metric_missing.json", "no result has metrics.model_tflops_per_gpu as a number"},
      {"history/repeated_point.json", "/points/2: repeats the configuration and mode of /points/0"},
      {"history/projected_as_measured.json", "/points/0/mode: is filed as measured but its result says projected"},
      {"history/mode_key_repeated.json", "the key \"mode\" appears twice in one object"},
  };
  return all;
}

TEST(InputCorpusGate, EveryFileIsRefusedByItsReaderNamingWhereAndWhy) {
  std::map<std::string, test::CorpusRefusal> refusals;
  for (const auto& [name, read] : gate_readers()) refusals[name] = [read](const fs::path& f) { return gate_refusal(read, f); };
  test::replay_corpus(refusals, gate_expected());
}

TEST(InputCorpusGate, EveryReaderRefusesTheFilesOfAny) {
  for (const auto& file : test::corpus_files(gate_corpus() / "any"))
    for (const auto& [name, read] : gate_readers())
      EXPECT_NE(gate_refusal(read, gate_corpus() / "any" / file), "") << name << " accepted any/" << file;
}

// `ptdp ARGS` in `dir`: exit status `status`, `words` on stderr.
void expect_exit(const test::ScratchDir& dir, const std::string& args, int status, const std::string& words) {
  const test::Run r = test::run_command(test::ptdp_cli() + " " + args, dir);
  EXPECT_EQ(r.status, status) << args << "\n" << r.out << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
}

TEST(InputCorpusGate, TheCommandsExitTwoOnThem) {
  const test::ScratchDir dir("corpus-gate");
  const std::string c = gate_corpus().string() + "/";
  for (const char* bad : {"real_time_denormal", "time_unit_unknown", "benchmarks_empty", "other_machine"})
    expect_exit(dir, "calibrate " + c + "benchmarks/" + bad + ".json --machine cpu-host --out cal.json", 2, bad);
  EXPECT_FALSE(fs::exists(dir.path() / "cal.json"));
  dir.write("tiny.json", test::tiny_config_json().dump());
  expect_exit(dir, "project --config tiny.json --calibration " + c + "calibration_tables/no_measurement.json", 2,
              "holds no measurement");
  for (const char* pair : {"retyped_override", "faster_than_peak"}) {
    const json doc = read_json_file(gate_corpus() / "compare_pairs" / (std::string(pair) + ".json"));
    const auto b = dir.write("base.json", doc["BASE"].dump()), n = dir.write("new.json", doc["NEW"].dump());
    expect_exit(dir, "compare " + b.string() + " " + n.string(), 2, "cannot judge");
  }
  fs::create_directories(dir.path() / "runs");
  fs::copy_file(gate_corpus() / "history" / "repeated_point.json", dir.path() / "runs" / "1.json");
  expect_exit(dir, "history runs", 2, "repeats the configuration and mode of /points/0");
}

}  // namespace
}  // namespace ptdp
