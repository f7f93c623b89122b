// Replays tests/corpus (see its README): every file there is refused by its
// reader with the exception that reader's callers catch, and a message naming
// the field or pointer and the rule; the files of corpus/any by every reader.
// A file without an expected message here, or a message here without its
// file, fails the test. The last tests run `ptdp` on some inputs of issue 16
// through each command's path (every other input's refusal is checked in the
// library above: the commands turn those exceptions into exit status 2).
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "core/config/json_read.h"
#include "core/gate/compare.h"
#include "core/results/result.h"
#include "core/sim/calibration.h"
#include "core/sweep/sweep_results.h"
#include "tests/cli_test_util.h"
#include "tests/corpus_replay.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path corpus() { return test::corpus_dir(); }

// Each reader as the commands call it; a refusal is an exception.
using Reader = std::function<void(const fs::path&)>;

void read_config(const fs::path& f) {
  const ConfigErrors errors = validate(load_config(f, default_machines_dir()));
  if (!errors.empty()) throw ConfigRefused(errors);
}

// A profile is named by its file's stem in the folder holding it.
void read_machine(const fs::path& f) { load_machine(f.stem().string(), f.parent_path()); }

void read_sweep(const fs::path& f) { load_sweep(f, default_machines_dir(), nullptr); }

void read_sweep_results(const fs::path& f) {
  static const Sweep sweep = load_sweep(fs::path(PTDP_SOURCE_DIR) / "sweeps" / "cpu_microbatch.json",
                                        default_machines_dir(), nullptr);
  SweepResults resumed(f, sweep);
}

void read_result_file(const fs::path& f) { read_result(read_json_file(f), f.string()); }
// As `ptdp compare F F --out` would: read, compare with itself, write the
// comparison; a pair the gate cannot judge is refused (exit 2) like a malformed file.
void read_compare(const fs::path& f) {
  const std::vector<CompareEntry> entries = load_compare_entries(f);
  const Comparison c = compare_results(entries, entries, 5);
  (void)to_json(c).dump();
  if (!c.unusable.empty()) throw std::runtime_error(c.unusable.front());
}
void read_calibration(const fs::path& f) { Calibration::load(f); }

const std::map<std::string, Reader>& readers() {
  static const std::map<std::string, Reader> all = {
      {"config", read_config},   {"machine", read_machine}, {"sweep", read_sweep},
      {"sweep_results", read_sweep_results}, {"result", read_result_file}, {"compare", read_compare},
      {"calibration", read_calibration}};
  return all;
}

// Every message of the refusal, one a line; "" when the input was accepted.
// Any other exception escapes and fails the test.
std::string refusal(const Reader& read, const fs::path& f) {
  try {
    read(f);
  } catch (const ConfigRefused& e) {
    std::string all;
    for (const auto& x : e.errors()) all += x.field + ": " + x.message + "\n";
    return all;
  } catch (const SweepRefused& e) {
    std::string all;
    for (const auto& p : e.problems()) all += p + "\n";
    return all;
  } catch (const std::runtime_error& e) {
    return std::string(e.what()) + "\n";
  }
  return "";
}

// "reader/file.json" -> a piece of the message its refusal must hold.
const std::map<std::string, std::string>& expected() {
  static const std::map<std::string, std::string> all = {
      {"config/hidden_overflows_double.json", "/model/hidden: the number 1e400 overflows a double"},
      {"config/machine_name_300_chars.json", "machine name must be a file name of letters, digits, '_', '-' and '.', not starting with '.', 1 to 100 characters (got 300: "},
      {"config/machine_name_with_slash.json", "machine name must be a file name"},
      {"config/lr_1e308.json", "optimizer.lr=1e+308 must be in [0, 1]"},
      {"config/tp_dp_65536.json", "plan.tp·plan.pp·plan.dp=4294967296 ranks must be at most 1048576"},
      {"config/hidden_2_pow_30.json", "model.hidden=1073741824 must be at most 1048576"},
      {"config/tp_wraps_uint64.json", "plan.tp is out of range for a 64-bit integer"},
      {"config/layers_not_integral.json", "model.layers must be an integer (got 2.5)"},
      {"config/sequence_elements_beyond_bound.json",
       "plan.micro_batch·model.seq_len·model.hidden=2199023255552 elements must be at most 1099511627776"},
      {"config/dropout_one.json", "model.dropout=1 must be in [0, 1)"},
      {"config/beta2_one.json", "optimizer.beta2=1 must be in [0, 1)"},
      {"config/machine_number.json", "machine must be a profile name or an object (got 5)"},
      {"machine/efficiency_memory_zero.json", "machine(efficiency_memory_zero).efficiency.memory=0 must be in (0, 1]"},
      {"machine/efficiency_negative.json", "efficiency.gemm=-0.5 must be in (0, 1]"},
      {"machine/efficiency_above_one.json", "efficiency.intra_node=1.5 must be in (0, 1]"},
      {"machine/intra_bandwidth_zero.json", "intra_node.bandwidth_gbs=0 must be in (0, 1e+06]"},
      {"machine/inter_latency_negative.json", "inter_node.latency_us=-1 must be in [0, 1e+06]"},
      {"machine/memory_bandwidth_zero.json", "memory_bandwidth_gbs=0 must be in (0, 1e+06]"},
      {"machine/peak_zero.json", "peak_tflops.fp32=0 must be in (0, 1e+06]"},
      {"machine/peak_overflows_double.json", "peak_overflows_double.json: /peak_tflops/fp32: the number 1e400 overflows"},
      {"machine/name_300_chars.json", "machine(name_300_chars).name must be a file name"},
      {"machine/gpus_per_node_zero.json", "gpus_per_node=0 must be positive"},
      {"machine/nics_negative.json", "inter_node.nics_per_node must be >= 0"},
      {"machine/launch_negative.json", "efficiency.kernel_launch_us=-1 must be in [0, 1e+06]"},
      {"sweep/name_number.json", "name_number.json: /name: must be a string (got 5)"},
      {"sweep/mode_number.json", "mode_number.json: /mode: must be a string (got 3)"},
      {"sweep/paper_number.json", "paper_number.json: /paper: must be a JSON object (got 7)"},
      {"sweep/paper_metric_number.json", "/paper/metric: must be a string (got 3)"},
      {"sweep/paper_metric_unknown.json", "/paper/metric: unknown metric \"model_tflop_per_gpu\": a path under"},
      {"sweep/point_expect_metric_unknown.json", "/points/0/expect/tflops: unknown metric \"tflops\""},
      {"sweep/paper_pointer_without_slash.json", "/paper/pointer: must be a JSON pointer, starting with '/'"},
      {"sweep/expect_min_string.json", "/expect/model_tflops_per_gpu/min: must be a number (got \"high\")"},
      {"sweep/search_1e10.json", "/search/plan.micro_batch/1: must be in [1, 1048576] (got 10000000000)"},
      {"sweep/search_split_string.json", "/search/split_tp_pp: must be true or false (got \"yes\")"},
      {"sweep/train_overflows_double.json", "/train/iterations: the number 1e400 overflows a double"},
      {"sweep/points_not_objects.json", "/points/0: must be a JSON object (got 5)"},
      {"sweep/point_expect_max_string.json", "/points/0/expect/model_tflops_per_gpu/max: must be a number"},
      {"sweep/axes_not_a_list.json", "/axes: must be a JSON array"},
      {"sweep/machine_name_300_chars.json", "/machine: machine name must be a file name"},
      {"sweep/base_model_number.json", "base_model_number.json: /base/model: must be a JSON object (got 5)"},
      {"sweep_results/empty_array.json", "empty_array.json: exists and is not a sweep results file"},
      {"sweep_results/no_sweep.json", "no_sweep.json: /sweep: is missing"},
      {"sweep_results/points_number.json", "points_number.json: /points: must be a JSON array (got 5)"},
      {"sweep_results/key_number.json", "key_number.json: /points/0/key: must be a string (got 3)"},
      {"sweep_results/point_number.json", "point_number.json: /points/0: must be a JSON object (got 4)"},
      {"sweep_results/sweep_name_number.json", "/sweep/name: must be a string (got 5)"},
      {"sweep_results/other_schema.json", "other_schema.json: exists and is not a sweep results file"},
      {"sweep_results/seconds_overflows_double.json", "/points/0/seconds: the number 1e400 overflows a double"},
      {"result/bubble_overflows_double.json", "/metrics/bubble/simulated: the number 1e400 overflows a double"},
      {"result/mode_number.json", "mode_number.json: /mode: must be a string (got 5)"},
      {"result/system_number.json", "system_number.json: /system: must be a string (got 5)"},
      {"result/projected_number.json", "/projected: must be a JSON object (got 5)"},
      {"result/peak_not_integral.json", "/metrics/memory_bytes/peak_measured: must be an integer (got 1.5)"},
      {"result/fits_string.json", "/metrics/memory_bytes/fits: must be true or false (got \"yes\")"},
      {"result/per_rank_number.json", "/metrics/memory_bytes/per_rank: must be a JSON object (got 5)"},
      {"result/vocab_padded_string.json", "/model/vocab_padded: must be an integer (got \"many\")"},
      {"result/hidden_2_pow_30.json", "/model/hidden: model.hidden=1073741824 must be at most 1048576"},
      {"compare/tflops_overflows_double.json", "/metrics/model_tflops_per_gpu: the number 1e400 overflows a double"},
      {"compare/mode_number.json", "mode_number.json: /mode: must be a string (got 3)"},
      {"compare/plan_number.json", "plan_number.json: /plan: must be a JSON object (got 3)"},
      {"compare/point_status_unknown.json", "/points/0/status: is not an outcome (ok, failed, timeout, oom, skipped, "
                                            "refused, does_not_fit, missing; got \"crashed\")"},
      {"compare/points_number.json", "points_number.json: /points: must be a JSON array (got 5)"},
      {"compare/point_label_number.json", "/points/0/label: must be a string (got 3)"},
      {"compare/point_not_object.json", "/points/0: must be a JSON object (got \"p\")"},
      {"compare/sweep_name_number.json", "/sweep/name: must be a string (got 5)"},
      {"compare/overrides_number.json", "/points/0/overrides: must be a JSON object (got 5)"},
      {"compare/result_number.json", "/points/0/result: must be a JSON object (got 5)"},
      {"compare/tflops_multibyte_string.json",
       "BASE metrics.model_tflops_per_gpu is not a number (got \"aééé"},
      {"calibration/seconds_overflows_double.json", "/gemms/0/seconds: the number 1e400 overflows a double"},
      {"calibration/gemm_seconds_zero.json", "/gemms/0/seconds: must be positive"},
      {"calibration/gemm_missing_n.json", "/gemms/0/n: is missing"},
      {"calibration/gemms_number.json", "/gemms: must be a JSON array (got 5)"},
      {"calibration/busbw_zero.json", "/collectives/intra_node.all_reduce/busbw_gbs: must be positive"},
      {"calibration/alpha_negative.json", "/collectives/intra_node.all_reduce/alpha_us: must be at least 0"},
      {"calibration/host_sharing_key_not_digits.json", "/host_sharing/2abc: a rank count of at least 2 expected"},
      {"calibration/name_number.json", "/name: must be a string (got 5)"},
      {"calibration/memory_bandwidth_negative.json", "/memory_bandwidth_gbs: must be at least 0"},
  };
  return all;
}

// corpus/any: what every reader's refusal of each file holds ("" for any refusal).
const std::map<std::string, std::string>& expected_of_any() {
  static const std::map<std::string, std::string> all = {
      {"number_overflow.json", "number_overflow.json: /schema: the number 1e400 overflows a double"},
      {"negative_overflow.json", "negative_overflow.json: /0: the number -1e400 overflows a double"},
      {"nested_1000_deep.json", "nests deeper than 64 levels of arrays and objects"},
      {"not_json.json", "not_json.json: not valid JSON"},
      {"empty.json", "empty.json: not valid JSON"},
      {"truncated.json", "truncated.json: /schema: not valid JSON"},
      {"nan_literal.json", "nan_literal.json: /model: not valid JSON"},
      {"trailing_garbage.json", "trailing_garbage.json: not valid JSON"},
      {"top_level_array.json", ""},
      {"top_level_string.json", ""},
  };
  return all;
}

TEST(InputCorpus, EveryFileIsRefusedByItsReaderNamingWhereAndWhy) {
  std::map<std::string, test::CorpusRefusal> refusals;
  for (const auto& [name, read] : readers()) refusals[name] = [read](const fs::path& f) { return refusal(read, f); };
  test::replay_corpus(refusals, expected());
}

TEST(InputCorpus, EveryReaderRefusesTheFilesOfAny) {
  EXPECT_EQ(test::corpus_files(corpus() / "any").size(), expected_of_any().size());
  for (const auto& file : test::corpus_files(corpus() / "any")) {
    const auto want = expected_of_any().find(file);
    ASSERT_NE(want, expected_of_any().end()) << "any/" << file << " has no expected message in this test";
    for (const auto& [name, read] : readers()) {
      const std::string got = refusal(read, corpus() / "any" / file);
      EXPECT_NE(got, "") << name << " accepted any/" << file;
      EXPECT_NE(got.find(want->second), std::string::npos) << name << " refused any/" << file << " with:\n" << got;
    }
  }
}


// `ptdp ARGS` (after `env`, e.g. "PTDP_MACHINES=dir") in `dir`: exit status 2, `words` on stderr.
void expect_refused(const test::ScratchDir& dir, const std::string& args, const std::string& words,
                    const std::string& env = "") {
  const test::Run r = test::run_command(env + " " + test::ptdp_cli() + " " + args, dir);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
}

TEST(InputCorpus, TheProgramExitsTwoOnBadConfigsAndProfiles) {
  const test::ScratchDir dir("corpus-config");
  const std::string c = corpus().string() + "/config/";
  expect_refused(dir, "project --config " + c + "hidden_overflows_double.json", "/model/hidden: the number 1e400 overflows");
  expect_refused(dir, "train --config " + c + "lr_1e308.json", "optimizer.lr=1e+308 must be in [0, 1]");
  dir.write("deep.json", "{\"model\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  expect_refused(dir, "project --config deep.json", "deep.json: /model/0/0/0/0/0/0");
  json cfg = test::tiny_config_json();
  dir.write("tiny.json", cfg.dump());
  fs::create_directories(dir.path() / "machines" / "cpu-host.json");
  expect_refused(dir, "project --config tiny.json", "machines/cpu-host.json: is a directory, not a JSON file",
                 "PTDP_MACHINES=machines");
  cfg["machine"] = "efficiency_memory_zero";
  dir.write("profile.json", cfg.dump());
  expect_refused(dir, "project --config profile.json", "machine(efficiency_memory_zero).efficiency.memory=0 must be in (0, 1]",
                 "PTDP_MACHINES=" + corpus().string() + "/machine");
}

TEST(InputCorpus, TheProgramExitsTwoOnBadSweepsAndResumes) {
  const test::ScratchDir dir("corpus-sweep");
  const std::string s = corpus().string() + "/sweep/";
  expect_refused(dir, "sweep " + s + "name_number.json", "/name: must be a string (got 5)");
  const std::string sweep = (fs::path(PTDP_SOURCE_DIR) / "sweeps" / "cpu_microbatch.json").string();
  for (const char* bad : {"empty_array", "key_number"}) {
    const std::string out = std::string(bad) + ".json";
    fs::copy_file(corpus() / "sweep_results" / out, dir.path() / out);
    expect_refused(dir, "sweep " + sweep + " --mode project --out " + out, out + ": ");
  }
}

TEST(InputCorpus, TheProgramExitsTwoOnBadCompareInputsAndCalibrations) {
  const test::ScratchDir dir("corpus-compare");
  const std::string bad = corpus().string() + "/compare/tflops_overflows_double.json";
  expect_refused(dir, "compare " + bad + " " + bad, "the number 1e400 overflows a double");
  dir.write("tiny.json", test::tiny_config_json().dump());
  expect_refused(dir, "project --config tiny.json --calibration " + corpus().string() +
                          "/calibration/seconds_overflows_double.json",
                 "/gemms/0/seconds: the number 1e400 overflows a double");
}

}  // namespace
}  // namespace ptdp
