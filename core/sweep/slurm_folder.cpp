// Identities, names and the point-file format of an --emit-slurm folder.
#include "core/sweep/slurm_folder.h"

#include <cstdio>

#include "core/io/crc32.h"
#include "core/results/build_info.h"
#include "core/results/plausibility.h"

namespace ptdp {

using nlohmann::json;

SweepIdentity sweep_identity(const Sweep& sweep) {
  const std::string bytes = read_json_text(sweep.file);
  char hash[32];
  std::snprintf(hash, sizeof hash, "crc32:%08x", static_cast<unsigned>(crc32(bytes.data(), bytes.size())));
  return {sweep.name, hash, build_commit()};
}

json identity_json(const SweepIdentity& id) {
  return {{"sweep", id.name}, {"sweep_hash", id.file_hash}, {"commit", id.commit}};
}

SweepIdentity read_identity(const JsonAt& j) {
  return {j.at("sweep").get<std::string>(), j.at("sweep_hash").get<std::string>(), j.at("commit").get<std::string>()};
}

std::string identity_mismatch(const SweepIdentity& here, const SweepIdentity& other) {
  if (other.name != here.name) return "another sweep: \"" + other.name + "\", not \"" + here.name + "\"";
  if (other.file_hash != here.file_hash)
    return "another version of the sweep file: " + other.file_hash + " in the point's result, " + here.file_hash +
           " now";
  if (other.commit != here.commit)
    return "another ptdp commit: " + other.commit + " in the point's result, " + here.commit + " collecting";
  return "";
}

std::filesystem::path manifest_path(const std::filesystem::path& dir) { return dir / "manifest.json"; }

std::vector<int> manifest_points(const json& doc, const std::string& source, const Sweep& sweep) {
  const JsonAt m(doc, source);
  if (m.object().get<std::string>("schema", "") != kSlurmManifestSchema)
    m.refuse("is not a manifest of ptdp Slurm jobs (\"schema\": \"" + std::string(kSlurmManifestSchema) + "\")");
  const std::string name = read_identity(m.at("identity")).name;
  if (name != sweep.name)
    m.refuse("holds the Slurm jobs of sweep \"" + cut_text(name) + "\", not \"" + sweep.name + "\"");
  std::vector<int> indices;
  std::vector<int> listed_at(sweep.points.size(), -1);  // point index -> its entry in the manifest
  for (const JsonAt& p : m.at("points").elements()) {
    const JsonAt at = p.at("index");
    const int index = at.get<int>();
    if (index < 0 || index >= static_cast<int>(sweep.points.size()))
      at.refuse("point " + std::to_string(index) + " is not a point of " + sweep.file.string() +
                " (the file changed since --emit-slurm: emit again)");
    int& first = listed_at[static_cast<std::size_t>(index)];
    if (first >= 0)
      at.refuse("point " + std::to_string(index) + " is listed twice (first at /points/" + std::to_string(first) +
                "): a manifest lists each job once");
    first = static_cast<int>(indices.size());
    indices.push_back(index);
  }
  return indices;
}

std::string point_stem(int index) { return "point-" + std::to_string(index); }

std::filesystem::path point_result_path(const std::filesystem::path& dir, int index) {
  return dir / (point_stem(index) + ".json");
}

json point_file_json(const PointFile& p) {
  return {{"schema", kSlurmPointSchema},       {"identity", identity_json(p.identity)},
            {"index", p.index},                  {"mode", to_string(p.run.mode)},
            {"status", to_string(p.run.status)}, {"reason", p.run.reason},
            {"seconds", p.run.seconds},          {"result", p.run.result}};
}

PointFile read_point_file(const std::filesystem::path& file) {
  const json doc = read_json_file(file);
  const JsonAt j(doc, file.string());
  if (j.object().get<std::string>("schema", "") != kSlurmPointSchema)
    j.refuse("is not a Slurm point result (\"schema\": \"" + std::string(kSlurmPointSchema) + "\")");
  PointFile p;
  p.identity = read_identity(j.at("identity"));
  p.index = j.at("index").get<int>();
  const JsonAt mode = j.at("mode");
  const auto parsed = parse_result_mode(mode.get<std::string>());
  if (!parsed) mode.refuse("must be measured, projected or slice (got " + json_excerpt(mode.value()) + ")");
  p.run.mode = *parsed;
  p.run.status = outcome_from_string(j.at("status").get<std::string>());
  p.run.reason = j.get<std::string>("reason", "");
  p.run.seconds = j.get<double>("seconds", 0);
  if (const auto result = j.find("result")) p.run.result = result->object().value();
  return p;
}

std::string result_problem(const PointFile& p, const SweepPoint& point) {
  const json& r = p.run.result;
  if (p.run.mode != ResultMode::measured)
    return std::string("/mode: a Slurm job measures its point; a ") + to_string(p.run.mode) + " point is not merged";
  if (r.is_null()) return p.run.status == Outcome::ok ? "/result: is null, yet the point is ok" : "";
  if (const std::string why = mode_contradiction(r, p.run.mode); !why.empty()) return "/result/mode: " + why;
  const json layout = {{"model", to_json(point.config.model)}, {"plan", to_json(point.config.plan)}};
  if (const std::string diff = layout_difference(layout, r, "the sweep's point", "the result"); !diff.empty())
    return "/result: another layout: " + diff;
  if (p.run.status != Outcome::ok) return "";
  std::string why;
  for (const FigureProblem& f : implausible_figures(r)) why += (why.empty() ? "" : "; ") + f.field + " " + f.rule;
  return why.empty() ? "" : "/result: implausible figures: " + why;
}

}  // namespace ptdp
