// The manifest's JSON, written and read back field by field.
#include "core/checkpoint/manifest.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "core/config/json_read.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

json piece_json(const ShardPiece& p) {
  return {{"param", p.param},         {"full_shape", p.full_shape}, {"dim", p.shard.dim}, {"parts", p.shard.parts},
          {"index", p.shard.index},   {"offset", p.offset},         {"count", p.count}};
}

ShardPiece piece_of(const JsonAt& j) {
  j.object();
  ShardPiece p;
  p.param = j.at("param").get<std::string>();
  for (const JsonAt& e : j.at("full_shape").array().elements()) p.full_shape.push_back(e.get<std::int64_t>());
  p.shard = {j.at("dim").get<int>(), j.at("parts").get<int>(), j.at("index").get<int>()};
  p.offset = j.at("offset").get<std::int64_t>();
  p.count = j.at("count").get<std::int64_t>();
  const std::int64_t numel = shape_numel(p.full_shape) / std::max(1, p.shard.parts);
  if (p.offset < 0 || p.count < 0 || p.offset + p.count > numel || p.shard.parts < 1 ||
      p.shard.dim >= static_cast<int>(p.full_shape.size()) || p.shard.index < 0 || p.shard.index >= p.shard.parts)
    j.refuse("is not a piece of a shard of " + p.param + " (offset, count, dim, parts or index out of range)");
  return p;
}

ShardRecord record_of(const JsonAt& j) {
  j.object();
  ShardRecord r;
  r.file = j.at("file").get<std::string>();
  if (r.file.empty() || r.file.find('/') != std::string::npos || r.file.starts_with("."))
    j.at("file").refuse("must be a plain file name inside the checkpoint's folder");
  r.rank = j.at("rank").get<int>();
  r.bytes = j.at("bytes").get<std::int64_t>();
  const std::string crc = j.at("crc32").get<std::string>();
  unsigned long value = 0;
  char tail = 0;
  if (std::sscanf(crc.c_str(), "%8lx%c", &value, &tail) != 1 || crc.size() != 8)
    j.at("crc32").refuse("must be 8 hexadecimal digits");
  r.crc32 = static_cast<std::uint32_t>(value);
  for (const JsonAt& e : j.at("pieces").array().elements()) r.pieces.push_back(piece_of(e));
  return r;
}

}  // namespace

Param ShardPiece::geometry() const {
  Param p;
  p.name = param;
  p.full_shape = full_shape;
  p.shard = shard;
  return p;
}

std::string piece_tensor_name(const std::string& kind, const ShardPiece& piece) {
  return kind + "/" + piece.param + "/" + std::to_string(piece.offset);
}

json to_json(const ShardRecord& r) {
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", static_cast<unsigned>(r.crc32));
  json pieces = json::array();
  for (const ShardPiece& p : r.pieces) pieces.push_back(piece_json(p));
  return {{"file", r.file}, {"rank", r.rank}, {"bytes", r.bytes}, {"crc32", crc}, {"pieces", pieces}};
}

json to_json(const Manifest& m) {
  json shards = json::array();
  for (const ShardRecord& r : m.shards) shards.push_back(to_json(r));
  return {{"format", kCheckpointFormat},
          {"step", m.step},
          {"adamw_steps", m.adamw_steps},
          {"loss_scaler", {{"scale", m.loss_scale}, {"good_steps", m.good_steps}, {"skipped", m.skipped_steps}}},
          {"data", {{"next_sample", m.next_sample}, {"source", m.data}}},
          {"model", m.model},
          {"plan", m.plan},
          {"optimizer", m.optimizer},
          {"shards", shards}};
}

ShardRecord shard_record_from_json(const json& j, const std::string& source) { return record_of(JsonAt(j, source)); }

Manifest read_manifest(const std::filesystem::path& file) {
  const json doc = read_json_file(file);
  const JsonAt j(doc, file.string());
  j.object();
  if (j.at("format").get<std::string>() != kCheckpointFormat)
    j.at("format").refuse(std::string("must be \"") + kCheckpointFormat + "\"");
  Manifest m;
  m.step = j.at("step").get<int>();
  m.adamw_steps = j.at("adamw_steps").get<int>();
  const JsonAt scaler = j.at("loss_scaler").object();
  m.loss_scale = scaler.at("scale").get<double>();
  m.good_steps = scaler.at("good_steps").get<int>();
  m.skipped_steps = scaler.at("skipped").get<int>();
  const JsonAt data = j.at("data").object();
  m.next_sample = data.at("next_sample").get<std::int64_t>();
  m.data = data.at("source").get<std::string>();
  m.model = j.at("model").object().value();
  m.plan = j.at("plan").object().value();
  m.optimizer = j.at("optimizer").object().value();
  for (const JsonAt& s : j.at("shards").array().elements()) m.shards.push_back(record_of(s));
  if (m.step < 0) j.at("step").refuse("must not be negative");
  return m;
}

std::string iteration_folder(int step) {
  char name[32];
  std::snprintf(name, sizeof name, "iter_%07d", step);
  return name;
}

std::filesystem::path resolve_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + " is not a folder");
  if (fs::exists(dir / kManifestName)) return dir;
  const fs::path latest = dir / kLatestName;
  if (!fs::exists(latest))
    throw std::runtime_error(dir.string() + " holds no checkpoint: no " + kManifestName + " and no " + kLatestName +
                             " file (an unfinished save leaves no manifest)");
  std::ifstream in(latest);
  std::string name;
  std::getline(in, name);
  if (name.empty() || name.find('/') != std::string::npos || name.starts_with("."))
    throw std::runtime_error(latest.string() + " does not name a checkpoint folder inside " + dir.string());
  if (!fs::exists(dir / name / kManifestName))
    throw std::runtime_error((dir / name / kManifestName).string() + " (named by " + latest.string() +
                             ") does not exist");
  return dir / name;
}

bool holds_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return false;
  if (fs::exists(dir / kManifestName) || fs::exists(dir / kLatestName)) return true;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().starts_with("iter_") && fs::exists(e.path() / kManifestName))
      return true;
  return false;
}

}  // namespace ptdp
