// Bounded work (issue 30): matching in compare, history and `sweep --collect`
// is near-linear (hash maps keyed by a point's configuration), and a Slurm
// manifest's repeated entries are refused, not scanned again. 100,000
// generated points each. No timed assertion: ctest runs these tests under a
// generous TIMEOUT of their own (tests/CMakeLists.txt), far below the minutes
// the quadratic matching took on 60,000.
#include <gtest/gtest.h>

#include "core/gate/compare.h"
#include "core/gate/history.h"
#include "core/sweep/slurm_folder.h"
#include "core/sweep/sweep_results.h"
#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

using json = nlohmann::json;

constexpr int kManyPoints = 100000;

// `count` projected points from `first` on (down from it when `step` is -1),
// each its own configuration, at `tflops`. Their overrides look like a paper
// sweep's: several keys, the one that tells points apart not first, so
// identities share a long prefix.
json generated_sweep(int first, int count, double tflops, int step = 1) {
  json result = test::result("projected", 8, tflops, 1);
  for (const char* unread : {"schema", "model", "machine"}) result.erase(unread);  // what the gate reads, no more
  result["metrics"].erase("memory_bytes");
  result["metrics"].erase("bubble");
  const json overrides = {{"model.hidden", 4096}, {"model.layers", 32}, {"plan.global_batch", 512}, {"plan.pp", 4},
                          {"plan.seed", 0}, {"plan.tp", 8}};
  const json proto = {{"mode", "projected"}, {"status", "ok"}, {"overrides", overrides}, {"result", result}};
  json doc = test::sweep({});
  json& points = doc["points"];
  for (int n = 0, i = first; n < count; ++n, i += step) {
    json& p = points.emplace_back(proto);
    p["key"] = p["label"] = std::to_string(i);
    p["overrides"]["plan.seed"] = i;
  }
  return doc;
}

TEST(GateScale, CompareMatchesAHundredThousandPoints) {
  const std::vector<CompareEntry> base = compare_entries(generated_sweep(0, kManyPoints, 100), "base.json");
  // NEW lists its points in the other order: matching by position in a list would scan it all, each time.
  const std::vector<CompareEntry> now = compare_entries(generated_sweep(kManyPoints, kManyPoints, 90, -1), "new.json");
  const Comparison c = compare_results(base, now, 5);
  EXPECT_EQ(c.rows.size(), static_cast<std::size_t>(kManyPoints - 1));
  EXPECT_EQ(c.regressions, kManyPoints - 1);  // 100 -> 90 TFLOP/s, a projection: the threshold decides
  EXPECT_EQ(c.only_in_base.size(), 1u);
  EXPECT_EQ(c.only_in_new.size(), 1u);
  EXPECT_TRUE(c.unusable.empty());
}

TEST(GateScale, HistoryGroupsAHundredThousandPoints) {
  std::vector<HistoryFile> files;
  for (int f = 0; f < 2; ++f)  // 2 commits of 100,000 configurations each
    files.push_back({std::to_string(f) + ".json", "c" + std::to_string(f),
                     compare_entries(generated_sweep(0, kManyPoints, 100 - f), std::to_string(f) + ".json")});
  const History h = build_history(files, "model_tflops_per_gpu", 5, kDefaultAlpha);
  EXPECT_EQ(h.series.size(), static_cast<std::size_t>(kManyPoints));
  EXPECT_EQ(h.series.back().points.size(), 2u);
  EXPECT_EQ(h.flagged, 0);  // 1% slower: within the threshold
}

TEST(GateScale, CollectMergesAHundredThousandRecords) {
  test::ScratchDir dir("scale-collect");
  Sweep sweep;
  sweep.name = "scale";
  SweepResults results(dir.path() / "r.json", sweep);
  std::vector<json> records;
  for (int i = 0; i < kManyPoints; ++i) records.push_back({{"key", "scale#" + std::to_string(i)}, {"status", "ok"}});
  EXPECT_TRUE(results.put(records));
  for (int i = 0; i < kManyPoints; ++i) {
    const json* r = results.record("scale#" + std::to_string(i));
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ((*r)["key"], "scale#" + std::to_string(i));
  }
  EXPECT_EQ(results.record("scale#-1"), nullptr);
  EXPECT_FALSE(results.put(records)) << "the same records again change nothing";
  records[5]["status"] = "failed";
  EXPECT_TRUE(results.put(records));
  EXPECT_EQ((*results.record("scale#5"))["status"], "failed");
  EXPECT_EQ(results.points().size(), static_cast<std::size_t>(kManyPoints));
}

TEST(GateScale, AManifestOfAHundredThousandJobsIsReadAndItsRepeatsRefused) {
  Sweep sweep;
  sweep.name = "scale";
  sweep.file = "scale.json";
  sweep.points.resize(kManyPoints);
  json manifest = {{"schema", kSlurmManifestSchema},
                   {"identity", {{"sweep", "scale"}, {"sweep_hash", "crc32:00000000"}, {"commit", "c"}}},
                   {"points", json::array()}};
  for (int i = 0; i < kManyPoints; ++i) manifest["points"].push_back({{"index", kManyPoints - 1 - i}});
  EXPECT_EQ(manifest_points(manifest, "manifest.json", sweep).size(), static_cast<std::size_t>(kManyPoints));
  for (auto& p : manifest["points"]) p["index"] = 7;  // one job listed 100,000 times
  try {
    manifest_points(manifest, "manifest.json", sweep);
    ADD_FAILURE() << "a job listed 100,000 times was read";
  } catch (const JsonRefused& e) {
    EXPECT_EQ(std::string(e.what()), "manifest.json: /points/1/index: point 7 is listed twice (first at /points/0): "
                                     "a manifest lists each job once");
  }
}

}  // namespace
}  // namespace ptdp
