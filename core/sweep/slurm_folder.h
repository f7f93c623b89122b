// The folder `ptdp sweep FILE --emit-slurm DIR` writes and `--collect DIR` reads:
//   manifest.json       "ptdp.slurm-sweep/1": the sweep's identity, its file, the launcher, the points emitted
//   point-N.sbatch      the Slurm job of point N; submit.sh sbatches them all
//   point-N.json        "ptdp.slurm-point/1": what point N's job wrote when it ended (identity, status, result)
//   point-N.log         the output of the point's ranks; point-N.slurm.out Slurm's log of the job
// A point's identity (the sweep, its file's bytes, the ptdp commit) lets collect
// refuse results of another sweep file or another build instead of merging them.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"
#include "core/sweep/sweep_results.h"

namespace ptdp {

inline constexpr const char* kSlurmManifestSchema = "ptdp.slurm-sweep/1";
inline constexpr const char* kSlurmPointSchema = "ptdp.slurm-point/1";

// Which sweep, which version of its file, which build: what makes point results mergeable.
struct SweepIdentity {
  std::string name;       // the sweep's "name"
  std::string file_hash;  // "crc32:89abcdef" of the sweep file's bytes
  std::string commit;     // build_commit() of the ptdp that ran (or emitted) it
};

// The identity of `sweep` as read now, under this ptdp build.
SweepIdentity sweep_identity(const Sweep& sweep);
nlohmann::json identity_json(const SweepIdentity& id);
SweepIdentity read_identity(const JsonAt& j);  // throws JsonRefused
// "" when `other` may be merged into a sweep of identity `here`, else why not
// ("another sweep file: crc32:… here, crc32:… in the point's result").
std::string identity_mismatch(const SweepIdentity& here, const SweepIdentity& other);

std::filesystem::path manifest_path(const std::filesystem::path& dir);
// The point indices a manifest (`doc`, read from `source`) lists, which must
// be of `sweep`; JsonRefused naming the field: not a manifest, another sweep's,
// an index outside the sweep (its file changed since), or one listed twice.
std::vector<int> manifest_points(const nlohmann::json& doc, const std::string& source, const Sweep& sweep);
// "point-N", the stem of point N's files in the folder.
std::string point_stem(int index);
std::filesystem::path point_result_path(const std::filesystem::path& dir, int index);

// A point file: what one job wrote, and whose it is.
struct PointFile {
  SweepIdentity identity;
  int index = 0;
  PointRun run;
};
nlohmann::json point_file_json(const PointFile& p);
PointFile read_point_file(const std::filesystem::path& file);  // throws JsonRefused
// Why the result of point file `p` may not be merged as `point`'s measurement,
// or "": a result filed as measured that says otherwise, another layout than
// the point's, or (status ok) figures that cannot be a run's
// (core/results/plausibility.h). Names the field: "/result/plan: ...".
std::string result_problem(const PointFile& p, const SweepPoint& point);

}  // namespace ptdp
