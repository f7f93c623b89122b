// Identities, names and the point-file format of an --emit-slurm folder.
#include "core/sweep/slurm_folder.h"

#include <cstdio>

#include "core/checkpoint/crc32.h"
#include "core/metrics/build_info.h"

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
  p.run.mode = ResultMode::measured;
  p.run.status = point_status_from_string(j.at("status").get<std::string>());
  p.run.reason = j.get<std::string>("reason", "");
  p.run.seconds = j.get<double>("seconds", 0);
  if (const auto result = j.find("result")) p.run.result = result->object().value();
  return p;
}

}  // namespace ptdp
