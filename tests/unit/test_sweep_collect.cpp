// `ptdp sweep --collect` merges only what a run of the point can be (issue
// 30): a job's result of another layout, with figures no run has (NaN written
// as null), or a projection filed as measured is recorded as refused, naming
// the file and the field, and not merged (exit 2); a manifest that lists a job
// twice is refused before anything is read. A real measurement is merged.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;
using test::ScratchDir;

const std::filesystem::path kGateFixtures = std::filesystem::path(PTDP_SOURCE_DIR) / "tests" / "gate";

test::Run ptdp_in(const ScratchDir& dir, const std::string& args) {
  return test::run_command(test::ptdp_cli() + " " + args, dir);
}

// The tiny two-point sweep's jobs emitted into DIR/jobs and point 0's run (its
// launcher fails at once): point-0.json, with this sweep's and build's identity.
json emitted_point_file(const ScratchDir& dir) {
  dir.write("s.json", test::tiny_cpu_sweep_json("collect_unit").dump());
  EXPECT_EQ(ptdp_in(dir, "sweep s.json --emit-slurm jobs --launcher 'false {cmd}'").status, 0);
  const auto job = test::run_command("SLURM_NTASKS=1 SLURM_JOB_ID=100 bash jobs/point-0.sbatch", dir);
  EXPECT_EQ(job.status, 1) << job.out << job.err;
  return json::parse(test::read_file(dir.path() / "jobs" / "point-0.json"));
}

// Point 0's job as if it had measured `result`: a real measured run of the
// tiny config (tests/gate/base.json, the layout of the sweep's point 0) unless changed.
void put_measurement(const ScratchDir& dir, json point_file, const json& result) {
  point_file["status"] = "ok";
  point_file["reason"] = "";
  point_file["result"] = result;
  dir.write("jobs/point-0.json", point_file.dump());
}

json measured_run() { return json::parse(test::read_file(kGateFixtures / "base.json")); }

// Record 0 of DIR/r.json.
json record_0(const ScratchDir& dir) {
  const json results = json::parse(test::read_file(dir.path() / "r.json"));
  for (const auto& p : results["points"])
    if (p["index"] == 0) return p;
  return json::object();
}

// Collects, and expects point 0 refused (exit 2) with `reason` in its record and nothing merged.
void expect_refused(const ScratchDir& dir, const std::string& reason) {
  const auto r = ptdp_in(dir, "sweep s.json --collect jobs --out r.json");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const json p = record_0(dir);
  EXPECT_EQ(p["status"], "refused") << p;
  EXPECT_NE(p["reason"].get<std::string>().find(reason), std::string::npos) << p["reason"];
  EXPECT_NE(p["reason"].get<std::string>().find("point-0.json: "), std::string::npos) << p["reason"];
  EXPECT_TRUE(p["result"].is_null());
}

TEST(SweepCollect, ARealMeasurementOfThePointIsMerged) {
  ScratchDir dir("collect-real");
  put_measurement(dir, emitted_point_file(dir), measured_run());
  const auto r = ptdp_in(dir, "sweep s.json --collect jobs --out r.json");
  EXPECT_EQ(r.status, 1) << r.out << r.err;  // point 1's job never ran: missing
  const json p = record_0(dir);
  EXPECT_EQ(p["status"], "ok") << p;
  EXPECT_EQ(p["result"]["metrics"]["model_tflops_per_gpu"], measured_run()["metrics"]["model_tflops_per_gpu"]);
}

TEST(SweepCollect, AResultOfAnotherLayoutIsRefused) {
  ScratchDir dir("collect-layout");
  json other = measured_run();
  other["plan"]["dp"] = 2;
  put_measurement(dir, emitted_point_file(dir), other);
  expect_refused(dir, "/result: another layout: plan.dp 1 in the sweep's point, 2 in the result");
}

TEST(SweepCollect, AResultWhoseFiguresWereNanIsRefused) {
  ScratchDir dir("collect-nan");
  json nan = measured_run();
  nan["metrics"]["model_tflops_per_gpu"] = nullptr;  // what a NaN is written as
  nan["metrics"]["iteration_s"]["median"] = nullptr;
  put_measurement(dir, emitted_point_file(dir), nan);
  expect_refused(dir, "/result: implausible figures: metrics.model_tflops_per_gpu is null; "
                      "metrics.iteration_s.median is null");
}

TEST(SweepCollect, AProjectionFiledAsMeasuredIsRefused) {
  ScratchDir dir("collect-mode");
  const json file = emitted_point_file(dir);
  json projected = measured_run();
  projected["mode"] = "projected";
  put_measurement(dir, file, projected);
  expect_refused(dir, "/result/mode: is filed as measured but its result says projected");
  json as_projected = file;
  as_projected["mode"] = "projected";
  put_measurement(dir, as_projected, measured_run());
  expect_refused(dir, "/mode: a Slurm job measures its point; a projected point is not merged");
  as_projected["mode"] = "guessed";  // no mode at all: the file is refused, the point failed
  put_measurement(dir, as_projected, measured_run());
  EXPECT_EQ(ptdp_in(dir, "sweep s.json --collect jobs --out r.json").status, 1);
  EXPECT_NE(record_0(dir)["reason"].get<std::string>().find("/mode: must be measured, projected or slice (got "
                                                            "\"guessed\")"),
            std::string::npos)
      << record_0(dir);
}

TEST(SweepCollect, AManifestListingAJobTwiceIsRefused) {
  ScratchDir dir("collect-twice");
  emitted_point_file(dir);
  json manifest = json::parse(test::read_file(dir.path() / "jobs" / "manifest.json"));
  manifest["points"].push_back(manifest["points"][0]);
  dir.write("jobs/manifest.json", manifest.dump());
  const auto r = ptdp_in(dir, "sweep s.json --collect jobs --out r.json");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("manifest.json: /points/2/index: point 0 is listed twice (first at /points/0)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace ptdp
