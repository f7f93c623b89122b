// The memory validation set (`ptdp validate --set memory`, issue 33): its
// reference's reader refuses a malformed file naming the field; the
// comparison's arithmetic on hand-computed points; every published figure is
// compared and every source says what its figures cover; the command prints
// each figure's memory error and writes the JSON the report reads.
#include <gtest/gtest.h>

#include <set>

#include "core/config/json_read.h"
#include "core/sweep/memory_check.h"
#include "core/sweep/sweep.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

// A reference with one run, `run` spliced in as its body.
std::string reference_with(const std::string& run) {
  return R"({"experiments": {"src": {"source": {"title": "t"}, "runs": {"r1": )" + run + "}}}}";
}

// The JSON pointer read_memory_reference() names for `run`, or "" when it reads.
std::string refused_pointer(const std::string& run) {
  test::ScratchDir dir("memory-reference");
  try {
    read_memory_reference(dir.write("ref.json", reference_with(run)));
  } catch (const JsonRefused& e) {
    return e.pointer();
  }
  return "";
}

TEST(MemoryReference, ReadsAWellFormedRun) {
  test::ScratchDir dir("memory-reference-ok");
  const auto runs = read_memory_reference(dir.write(
      "ref.json", reference_with(R"({"value": 7.5, "scope": "model_state_per_parameter", "where": "table",
                                     "pending": "zero-2"})")));
  ASSERT_EQ(runs.count("src/r1"), 1u);
  EXPECT_EQ(runs.at("src/r1").value, 7.5);
  EXPECT_EQ(runs.at("src/r1").scope, MemoryScope::model_state_per_parameter);
  EXPECT_EQ(runs.at("src/r1").pending, "zero-2");
}

TEST(MemoryReference, RefusesAMalformedFileNamingTheField) {
  const std::string ok_scope = R"("scope": "total", "where": "w")";
  EXPECT_EQ(refused_pointer(R"({)" + ok_scope + "}"), "/experiments/src/runs/r1/value");  // missing
  EXPECT_EQ(refused_pointer(R"({"value": 0, )" + ok_scope + "}"), "/experiments/src/runs/r1/value");
  EXPECT_EQ(refused_pointer(R"({"value": "8", )" + ok_scope + "}"), "/experiments/src/runs/r1/value");
  EXPECT_EQ(refused_pointer(R"({"value": 8, "scope": "weights", "where": "w"})"), "/experiments/src/runs/r1/scope");
  EXPECT_EQ(refused_pointer(R"({"value": 8, "where": "w"})"), "/experiments/src/runs/r1/scope");  // missing
  EXPECT_EQ(refused_pointer(R"({"value": 8, "scope": "total"})"), "/experiments/src/runs/r1/where");  // missing
  test::ScratchDir dir("memory-reference-source");
  try {
    read_memory_reference(dir.write("ref.json", R"({"experiments": {"src": {"runs": {}}}})"));
    ADD_FAILURE() << "a source without its description read";
  } catch (const JsonRefused& e) {
    EXPECT_EQ(e.pointer(), "/experiments/src/source");
  }
}

// By hand: 1000 parameters on the stage; 2 bytes each of weights, 4 of fp32
// gradients plus 4/8 of an owned shard, 12/8 of optimizer state at d = 8:
// 8 bytes a parameter, against a published 7.5: +1/15.
TEST(MemoryCheck, TheComparisonsArithmeticOnAHandComputedPoint) {
  const MemoryBreakdown stage{.params = 2000, .grads = 4500, .optimizer = 1500, .activations = 7000};
  const StateBytes partitioned{.params = 2000, .grads = 4500, .optimizer = 1500};
  EXPECT_DOUBLE_EQ(modelled_memory(MemoryScope::model_state_per_parameter, stage, partitioned, 1000), 8.0);
  EXPECT_DOUBLE_EQ(modelled_memory(MemoryScope::model_state, stage, partitioned, 1000), 8000.0);
  EXPECT_DOUBLE_EQ(modelled_memory(MemoryScope::activations, stage, partitioned, 1000), 7000.0);
  EXPECT_DOUBLE_EQ(modelled_memory(MemoryScope::total, stage, partitioned, 1000), 15000.0);
  MemoryRun within, pending;
  within.value = 7.5;
  pending.value = 10, pending.pending = "zero-3";
  const MemorySourceCheck c{"s", "s", "", {{within, 8.0, (8.0 - 7.5) / 7.5, {}}, {pending, 12.0, 0.2, {}}}, {}};
  const MemoryErrors all = memory_errors({c}, true), modelled = memory_errors({c}, false);
  EXPECT_EQ(all.points, 2u);
  EXPECT_NEAR(all.mean_abs_error, (1.0 / 15 + 0.2) / 2, 1e-12);
  EXPECT_NEAR(all.max_abs_error, 0.2, 1e-12);
  EXPECT_EQ(modelled.points, 1u);
  EXPECT_NEAR(modelled.max_abs_error, 1.0 / 15, 1e-12);
}

const std::vector<MemorySourceCheck>& memory_checks() {
  static const std::vector<MemorySourceCheck> c = check_memory_set();
  return c;
}

const MemoryPointCheck& point(const std::string& run) {
  for (const auto& c : memory_checks())
    for (const auto& p : c.points)
      if (p.run.id == run) return p;
  throw std::runtime_error("no run " + run);
}

// Without data-parallel sharding the model state is exact by hand: 2 + 4 + 12
// bytes a parameter in bf16 (weights, fp32 gradients, fp32 masters and two
// moments), 4 + 4 + 8 in fp32, and ZeRO's 2 + 2 + 12 in fp16 with its 16-bit
// gradients (grad_precision compute). Fully sharded at d = 64: 16/64.
TEST(MemoryCheck, UnshardedModelStateByHand) {
  EXPECT_NEAR(point("bf16-nondist").modelled, 18.0, 1e-9);
  EXPECT_NEAR(point("bf16-nondist").error, 0.0, 1e-9);
  EXPECT_NEAR(point("fp32-nondist").modelled, 16.0, 1e-9);
  EXPECT_NEAR(point("fig1-baseline").modelled, 16.0, 1e-9);
  EXPECT_NEAR(point("fig1-pos-g-p").modelled, 16.0 / 64, 1e-9);
}

TEST(MemoryValidation, TenFiguresFromTwoSourcesEachUsedAndDescribed) {
  const MemoryErrors all = memory_errors(memory_checks(), true);
  EXPECT_GE(all.points, 10u);
  EXPECT_GE(memory_checks().size(), 2u);
  std::set<std::string> used;
  for (const auto& c : memory_checks()) {
    EXPECT_TRUE(c.refused.empty()) << c.name << ": " << c.refused.front();
    for (const auto& p : c.points) used.insert(p.run.source + "/" + p.run.id);
  }
  for (const auto& [key, run] : read_memory_reference(memory_reference_file()))
    EXPECT_TRUE(used.contains(key)) << key << " is published and never compared";
  const nlohmann::json doc = read_json_file(memory_reference_file());
  for (const auto& [name, e] : doc.at("experiments").items())
    for (const char* key : {"title", "url", "where", "year", "covers", "kind"})
      EXPECT_TRUE(e.at("source").contains(key)) << name << ": " << key;
}

TEST(CliValidate, MemorySetPrintsTheMemoryErrorAndWritesItsJson) {
  test::ScratchDir dir("validate-memory");
  const auto r = test::run_command(test::ptdp_cli() + " validate --set memory --out m.json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fig1-baseline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory error   +6.7%"), std::string::npos) << r.out;  // bf16-dist-d8: 8 against 7.5
  EXPECT_NE(r.out.find("memory set: "), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir.path() / "m.json"));
  EXPECT_EQ(j.at("set"), "memory");
  EXPECT_EQ(j.at("overall").at("points").get<std::size_t>(), memory_errors(memory_checks(), true).points);
  for (const auto& e : j.at("experiments"))
    for (const auto& p : e.at("points"))
      for (const char* key : {"run", "scope", "published", "modelled", "error", "where"})
        EXPECT_TRUE(p.contains(key)) << key;
  const auto bad = test::run_command(test::ptdp_cli() + " validate --set memory sweeps/table1.json", dir);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("sweeps"), std::string::npos) << bad.err;
}

// A sweep point whose tag.run the reference lacks is refused, naming it, before anything is compared.
TEST(CliValidate, MemorySetRefusesAPointWithoutItsPublishedRun) {
  test::ScratchDir dir("validate-memory-unknown-run");
  const std::filesystem::path root = dir.path() / "data", src(PTDP_SOURCE_DIR);
  std::filesystem::create_directories(root / "sweeps" / "memory");
  std::filesystem::create_directories(root / "report" / "reference");
  std::filesystem::copy(src / "sweeps" / "machines", root / "sweeps" / "machines");
  std::filesystem::copy(src / "report" / "reference" / "memory-runs.json", root / "report" / "reference");
  nlohmann::json sweep = read_json_file(src / "sweeps" / "memory" / "zero2020.json");
  sweep["points"][0]["tag.run"] = "fig9-unknown";
  std::ofstream(root / "sweeps" / "memory" / "zero2020.json") << sweep.dump();
  const auto r = test::run_command("PTDP_DATA_DIR='" + root.string() + "' " + test::ptdp_cli() + " validate --set memory", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("tag.run \"fig9-unknown\" is no run of \"zero2020\""), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
