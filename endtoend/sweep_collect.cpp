// `ptdp sweep FILE --collect DIR --out RESULT`: what the emitted Slurm jobs
// wrote, merged into the ordinary sweep results file through the runner's own
// point_record, so the report and `ptdp compare` read it unchanged. Collecting
// again merges what finished since and leaves the file as it was otherwise. A
// result of another sweep file, commit, point, mode or layout, or with figures
// no run can have (result_problem), is recorded as refused, not merged.
#include <cstdio>

#include "core/config/json_read.h"
#include "core/sweep/slurm_folder.h"
#include "core/sweep/sweep_results.h"
#include "endtoend/commands.h"
#include "endtoend/slurm_sweep.h"

namespace ptdp::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Tally {
  int ok = 0, failed = 0, missing = 0, mismatched = 0, rejected = 0;
};

// What `point`'s job left in `dir`, or nothing to keep the record `previous` already holds.
std::optional<PointRun> collected_run(const fs::path& dir, const SweepPoint& point, const SweepIdentity& here,
                                      const json* previous, Tally& tally) {
  const int index = point.index;
  const fs::path file = point_result_path(dir, index);
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    if (previous != nullptr && (*previous)["status"] != to_string(Outcome::missing)) return std::nullopt;
    return PointRun{ResultMode::measured, Outcome::missing,
                    "no result yet from its Slurm job (" + file.string() + ")", 0, nullptr};
  }
  try {
    const PointFile f = read_point_file(file);
    std::string why = identity_mismatch(here, f.identity);
    if (why.empty() && f.index != index) why = "another point: index " + std::to_string(f.index);
    if (!why.empty()) why = "its result is from " + why;
    else if (const std::string problem = result_problem(f, point); !problem.empty()) why = file.string() + ": " + problem;
    if (why.empty()) return f.run;
    ++tally.mismatched;
    return PointRun{ResultMode::measured, Outcome::refused, "not merged: " + why, f.run.seconds, nullptr};
  } catch (const JsonRefused& e) {
    return PointRun{ResultMode::measured, Outcome::failed, std::string("its result is refused: ") + e.what(), 0,
                    nullptr};
  }
}

void tally_record(const json& record, Tally& t) {
  const Outcome status = outcome_from_string(record["status"].get<std::string>());
  if (status == Outcome::ok) ++t.ok;
  else if (status == Outcome::missing) ++t.missing;
  else if (is_failure(status)) ++t.failed;
  if (record["acceptance"] == std::string(to_string(Acceptance::fail))) ++t.rejected;
}

int merge_points(const Sweep& sweep, const std::vector<int>& indices, const SweepOptions& o) {
  SweepResults results(o.out, sweep);
  const SweepIdentity here = sweep_identity(sweep);
  Tally tally;
  std::vector<json> records;
  for (const int index : indices) {
    const SweepPoint& p = sweep.points[static_cast<std::size_t>(index)];
    const std::string key = point_key(sweep, p, ResultMode::measured);
    const std::optional<PointRun> run = collected_run(o.collect, p, here, results.record(key), tally);
    records.push_back(run ? point_record(sweep, p, *run) : *results.record(key));
    tally_record(records.back(), tally);
    if (records.back()["status"] == to_string(Outcome::refused)) std::fprintf(stderr, "  #%d %s\n", index,
                                                            records.back()["reason"].get<std::string>().c_str());
  }
  const bool changed = results.put(records);
  std::printf("ptdp sweep %s: collected %zu points from %s: %d ok, %d failed, %d missing, %d refused (another sweep "
              "file or commit, mode or layout, or implausible figures; not merged), %d below acceptance -> %s (%s)\n", sweep.name.c_str(), indices.size(),
              o.collect.c_str(), tally.ok, tally.failed, tally.missing, tally.mismatched, tally.rejected,
              o.out.c_str(), changed ? "updated" : "unchanged");
  if (tally.mismatched > 0) return kExitRefused;
  return tally.failed + tally.missing + tally.rejected > 0 ? kExitFailed : kExitOk;
}

}  // namespace

int collect_slurm(const SweepOptions& options) {
  SweepOptions o = options;
  const std::optional<Sweep> sweep = load_sweep_or_report(o.file, o.max_points);
  if (!sweep || !resolve_results_path(o, *sweep)) return kExitRefused;
  try {
    const fs::path manifest = manifest_path(o.collect);
    return merge_points(*sweep, manifest_points(read_json_file(manifest), manifest.string(), *sweep), o);
  } catch (const std::runtime_error& e) {  // JsonRefused: the manifest, or the results file of another sweep
    std::fprintf(stderr, "ptdp sweep: --collect %s: %s\n", o.collect.c_str(), e.what());
    return kExitRefused;
  }
}

}  // namespace ptdp::cli
