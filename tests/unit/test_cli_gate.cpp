// The noise-aware gate end to end on real results of the tiny CPU config
// (tests/gate/README.md says how they were made): a rerun of the same commit
// passes, a planted 10% slowdown fails with a JUnit failure; and `ptdp
// history` over a folder of them flags the slow commit.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/results/result_io.h"
#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;
using test::ScratchDir;

const std::filesystem::path kGate = std::filesystem::path(PTDP_SOURCE_DIR) / "tests" / "gate";

json fixture(const std::string& name) { return json::parse(test::read_file(kGate / name)); }

// `r` with every iteration sample, the median and TFLOP/s scaled as a run `factor` times slower would give.
json slowed_run(json r, double factor) {
  json& it = r["metrics"]["iteration_s"];
  for (auto& s : it["samples"]) s = s.get<double>() * factor;
  for (const char* k : {"median", "min", "max", "mean"}) it[k] = it[k].get<double>() * factor;
  r["metrics"]["model_tflops_per_gpu"] = r["metrics"]["model_tflops_per_gpu"].get<double>() / factor;
  return r;
}

// `r` with these iteration samples, its median theirs and its TFLOP/s
// following from that median, as ptdp train records a run (the gate refuses
// figures that disagree: core/results/plausibility.h).
json with_samples(json r, const std::vector<double>& samples) {
  json& it = r["metrics"]["iteration_s"];
  const double before = it["median"].get<double>(), after = median(samples);
  it["samples"] = samples;
  it["median"] = after;
  it["min"] = *std::min_element(samples.begin(), samples.end());
  it["max"] = *std::max_element(samples.begin(), samples.end());
  r["metrics"]["model_tflops_per_gpu"] = r["metrics"]["model_tflops_per_gpu"].get<double>() * before / after;
  return r;
}

// `r` with 21 samples within ±1% of its median: a run on a quiet machine.
json tight(const json& r) {
  const double median = r["metrics"]["iteration_s"]["median"].get<double>();
  std::vector<double> samples;
  for (int i = 0; i <= 20; ++i) samples.push_back(median * (1 + 0.001 * (i - 10)));
  return with_samples(r, samples);
}

test::Run compare_files(const ScratchDir& dir, const json& base, const json& now, const std::string& options) {
  const auto b = dir.write("base.json", base.dump()), n = dir.write("new.json", now.dump());
  return test::run_command(test::ptdp_cli() + " compare " + b.string() + " " + n.string() + " " + options, dir);
}

TEST(CliGate, TheFixturesAreARealRerunWithSamples) {
  const json base = fixture("base.json"), rerun = fixture("rerun.json");
  EXPECT_EQ(base["mode"], "measured");
  EXPECT_GE(base["metrics"]["iteration_s"]["samples"].size(), 10u);
  EXPECT_EQ(base["software"]["commit"], rerun["software"]["commit"]);
  EXPECT_NE(base["metrics"]["iteration_s"]["samples"], rerun["metrics"]["iteration_s"]["samples"]);
}

TEST(CliGate, ARerunOfTheSameCommitPasses) {
  ScratchDir dir("gate-rerun");
  const auto r = compare_files(dir, fixture("base.json"), fixture("rerun.json"), "--junit j.xml --out c.json");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  const json c = json::parse(test::read_file(dir.path() / "c.json"));
  EXPECT_EQ(c["schema"], "ptdp.compare/2");
  EXPECT_EQ(c["rows"][0]["regressed"], false);
  EXPECT_TRUE(c["rows"][0]["noise"]["p_value"].is_number());
  const std::string xml = test::read_file(dir.path() / "j.xml");
  EXPECT_NE(xml.find("tests=\"1\" failures=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("one-sided Mann-Whitney p = "), std::string::npos) << xml;
}

TEST(CliGate, APlantedTenPercentSlowdownFailsWithAJunitFailure) {
  ScratchDir dir("gate-slow");
  const json base = tight(fixture("base.json"));
  const auto r = compare_files(dir, base, slowed_run(base, 1.10), "--junit j.xml");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 matched, 1 regressed beyond 5%; 0 only in base, 0 only in new; noise test at alpha 0.05"), std::string::npos) << r.out;
  const std::string xml = test::read_file(dir.path() / "j.xml");
  EXPECT_NE(xml.find("tests=\"1\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"regression: TFLOP/s/GPU "), std::string::npos) << xml;
  EXPECT_NE(xml.find("(+10.0%, threshold 5%)"), std::string::npos) << xml;
}

// The same 10% on the fixture as recorded: its iterations spread from 4 to 17 ms on a
// loaded 2-core VM, and 10% is inside that.
TEST(CliGate, ATenPercentSlowdownInsideAWideSpreadIsNoise) {
  ScratchDir dir("gate-slow-wide");
  const json base = fixture("base.json");
  const auto r = compare_files(dir, base, slowed_run(base, 1.10), "");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("within noise"), std::string::npos) << r.out;
}

// The medians 7.4% apart but each run's spread covering the other's: noise (p 0.26).
TEST(CliGate, MediansBeyondTheThresholdInsideTheSpreadPass) {
  ScratchDir dir("gate-overlap");
  const json base = with_samples(fixture("base.json"), {1.00, 1.30, 1.02, 1.28, 1.04, 1.26, 1.06, 1.24});  // median 1.15
  const json now = with_samples(fixture("base.json"), {1.02, 1.31, 1.20, 1.29, 1.05, 1.27, 1.22, 1.25});   // 1.235
  const auto r = compare_files(dir, base, now, "--junit j.xml");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("within noise"), std::string::npos) << r.out;
  EXPECT_NE(test::read_file(dir.path() / "j.xml").find("failures=\"0\""), std::string::npos);
}

TEST(CliGate, TooFewSamplesAreSaidNotPassedSilently) {
  ScratchDir dir("gate-few");
  const json base = with_samples(fixture("base.json"), {1.0, 1.01});
  const json now = slowed_run(base, 1.10);
  const auto r = compare_files(dir, base, now, "--junit j.xml");
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // the threshold alone flags it
  EXPECT_NE(r.out.find("— (2/2)"), std::string::npos) << r.out;
  EXPECT_NE(test::read_file(dir.path() / "j.xml").find("too few samples for the noise test (2 and 2"),
            std::string::npos);
}

TEST(CliGate, WhatCannotBeJudgedIsASkippedTestCase) {
  ScratchDir dir("gate-skipped");
  json failed = test::sweep_point("b", 4, nullptr);
  failed["reason"] = "killed by signal 9";
  const json base = test::sweep({test::sweep_point("a", 2, test::result("projected", 8, 100, 1)),
                                 test::sweep_point("b", 4, test::result("projected", 8, 100, 1))});
  const json now = test::sweep({test::sweep_point("a", 2, test::result("projected", 8, 100, 1)), failed});
  const auto r = compare_files(dir, base, now, "--junit j.xml");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const std::string xml = test::read_file(dir.path() / "j.xml");
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"fig:b (projected)\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("cannot judge: NEW is failed (killed by signal 9)"), std::string::npos) << xml;
}

TEST(CliGate, BadOutputsAndAlphaAreRefusedBeforeAnyWork) {
  ScratchDir dir("gate-refused");
  std::filesystem::create_directories(dir.path() / "folder");
  const json base = fixture("base.json");
  auto r = compare_files(dir, base, base, "--out c.json --junit folder");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--junit"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "c.json"));  // all or nothing
  r = compare_files(dir, base, base, "--out same.xml --junit same.xml");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  for (const std::string alpha : {"0", "1", "nan", "-0.1", "x"}) {
    r = compare_files(dir, base, base, "--alpha " + alpha);
    EXPECT_EQ(r.status, 2) << alpha << r.out << r.err;
    EXPECT_NE(r.err.find("--alpha"), std::string::npos) << r.err;
  }
}

// A folder of results over commits: base, its rerun (slower by the machine,
// within noise), a planted 3x slowdown, a recovery; a projection of another
// configuration beside them.
TEST(CliHistory, FlagsTheSlowCommitOneLinePerFileAndConfiguration) {
  ScratchDir dir("history");
  const auto folder = dir.path() / "runs";
  std::filesystem::create_directories(folder);
  const json base = fixture("base.json"), rerun = fixture("rerun.json");
  const auto put = [&](const std::string& name, json r, const std::string& commit) {
    r["software"]["commit"] = commit;
    std::ofstream(folder / name) << r.dump();
  };
  put("1.json", base, "c1");
  put("2.json", rerun, "c2");
  put("3.json", slowed_run(rerun, 3), "c3");
  put("4.json", rerun, "c4");
  put("5.json", test::result("projected", 8, 100, 1), "c5");
  const auto r = test::run_command(test::ptdp_cli() + " history runs --metric model_tflops_per_gpu --json h.json", dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3.json  c3  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-66.7%"), std::string::npos) << r.out;  // 1/3 − 1
  EXPECT_NE(r.out.find("2 configuration(s), 1 commit(s) flagged"), std::string::npos) << r.out;
  const json h = json::parse(test::read_file(dir.path() / "h.json"));
  EXPECT_EQ(h["schema"], "ptdp.history/1");
  ASSERT_EQ(h["series"].size(), 2u);
  const json& points = h["series"][0]["points"];
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0]["flagged"], false);
  EXPECT_EQ(points[1]["flagged"], false);  // the rerun
  EXPECT_EQ(points[2]["flagged"], true);   // the slowdown
  EXPECT_EQ(points[3]["flagged"], false);  // faster again
  EXPECT_EQ(h["series"][1]["points"].size(), 1u);
}

TEST(CliHistory, RefusesAMetricNoFileHasAndAFolderWithoutResults) {
  ScratchDir dir("history-bad");
  std::filesystem::create_directories(dir.path() / "empty");
  std::filesystem::create_directories(dir.path() / "runs");
  std::ofstream(dir.path() / "runs" / "1.json") << fixture("base.json").dump();
  auto r = test::run_command(test::ptdp_cli() + " history runs --metric checkpoint.save_s --json h.json", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--metric checkpoint.save_s: no result has metrics.checkpoint.save_s as a number"),
            std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.json"));
  r = test::run_command(test::ptdp_cli() + " history runs --metric nonsense --json h.json", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--metric: unknown metric \"nonsense\": a path under a result's \"metrics\""),
            std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.json"));
  r = test::run_command(test::ptdp_cli() + " history empty", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no *.json result files"), std::string::npos) << r.err;
  std::ofstream(dir.path() / "runs" / "2.json") << "{\"schema\": \"ptdp.sweep/1\"}";
  r = test::run_command(test::ptdp_cli() + " history runs", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("2.json: not a ptdp result"), std::string::npos) << r.err;
}

// A plot that cannot be drawn (no such Python) fails, and the JSON asked for with it is not left either.
TEST(CliHistory, APlotThatCannotBeDrawnLeavesNoOutput) {
  ScratchDir dir("history-nopython");
  std::filesystem::create_directories(dir.path() / "runs");
  std::ofstream(dir.path() / "runs" / "1.json") << fixture("base.json").dump();
  const auto r = test::run_command(
      test::ptdp_cli() + " history runs --out h.png --json h.json --python /nonexistent/python3", dir);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.png"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "h.json"));
}

// The plot's scratch space: a folder of the run's own, made by mkdtemp (mode
// 0700, a name no one can guess from the process id) and removed after. A
// stand-in for Python records where its input lay. Links planted beforehand
// under the old predictable name (ptdp-history-PID, for the next few hundred
// process ids) would have led the plot's log onto a victim file and
// truncated it; the victim keeps its bytes.
TEST(CliHistory, ThePlotsScratchFolderIsItsOwnAndRemoved) {
  ScratchDir dir("history-scratch");
  const auto tmp = dir.path() / "tmp", trap = dir.path() / "trap";
  std::filesystem::create_directories(dir.path() / "runs");
  std::filesystem::create_directories(tmp);
  std::filesystem::create_directories(trap);
  std::ofstream(dir.path() / "runs" / "1.json") << fixture("base.json").dump();
  const auto victim = dir.write("victim.txt", "precious");
  std::filesystem::create_symlink(victim, trap / "plot.log");
  std::filesystem::create_symlink(victim, trap / "history.json");
  long last_pid = 0;
  std::ifstream("/proc/sys/kernel/ns_last_pid") >> last_pid;
  for (long pid = last_pid + 1; last_pid > 0 && pid < last_pid + 400; ++pid)
    std::filesystem::create_symlink(trap, tmp / ("ptdp-history-" + std::to_string(pid)));
  const auto fake = dir.write("python", R"sh(#!/bin/sh
# report/plot_history.py INPUT PNG: where the input lay, that folder's mode, who started this
d=$(dirname "$2")
printf '%s\n%s\n%s\n' "$d" "$(stat -c %a "$d")" "$PPID" > "$RECORD"
printf png > "$3"
)sh");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const auto r = test::run_command("TMPDIR=" + tmp.string() + " RECORD=" + (dir.path() / "record.txt").string() + " " +
                                       test::ptdp_cli() + " history runs --out h.png --python " + fake.string(),
                                   dir);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(test::read_file(dir.path() / "h.png"), "png");
  std::istringstream record(test::read_file(dir.path() / "record.txt"));
  std::string folder, mode, parent;
  std::getline(record, folder), std::getline(record, mode), std::getline(record, parent);
  EXPECT_EQ(std::filesystem::path(folder).parent_path(), tmp);
  EXPECT_EQ(std::filesystem::path(folder).filename().string().rfind("ptdp-history-", 0), 0u) << folder;
  EXPECT_NE(std::filesystem::path(folder).filename().string(), "ptdp-history-" + parent) << "named by the process id";
  EXPECT_EQ(mode, "700");
  EXPECT_FALSE(std::filesystem::exists(folder)) << "the scratch folder is removed";
  EXPECT_EQ(test::read_file(victim), "precious");
}

// --out and --json are never one of the files the history reads, by name or through a link.
TEST(CliHistory, AnOutputThatIsOneOfItsInputsIsRefused) {
  ScratchDir dir("history-inputs");
  std::filesystem::create_directories(dir.path() / "runs");
  const std::string text = fixture("base.json").dump();
  std::ofstream(dir.path() / "runs" / "1.json") << text;
  std::filesystem::create_symlink(dir.path() / "runs" / "1.json", dir.path() / "link.json");
  for (const std::string out : {"--json runs/1.json", "--json link.json", "--out runs/1.json"}) {
    const auto r = test::run_command(test::ptdp_cli() + " history runs " + out, dir);
    EXPECT_EQ(r.status, 2) << out << r.out << r.err;
    EXPECT_NE(r.err.find("is the input DIR"), std::string::npos) << out << r.err;
    EXPECT_EQ(test::read_file(dir.path() / "runs" / "1.json"), text) << out;
  }
}

}  // namespace
}  // namespace ptdp
