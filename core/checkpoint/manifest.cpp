// The manifest's JSON, written and read back field by field.
#include "core/checkpoint/manifest.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

#include "core/config/bounds.h"
#include "core/config/json_read.h"
#include "core/io/read_file.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

json piece_json(const ShardPiece& p) {
  return {{"param", p.param},         {"full_shape", p.full_shape}, {"dim", p.shard.dim}, {"parts", p.shard.parts},
          {"index", p.shard.index},   {"offset", p.offset},         {"count", p.count}};
}

// full_shape: every size at least 1, their product (taken without overflow) at
// most one tensor's bound (core/config/bounds.h): element indices stay far inside 64 bits.
Shape piece_shape(const JsonAt& j, std::int64_t& numel) {
  Shape shape;
  numel = 1;
  for (const JsonAt& e : j.array().elements()) {
    const auto size = e.get<std::int64_t>();
    if (size < 1 || numel > kMaxElements / size)
      e.refuse("must be a size of at least 1, with the shape's product at most 2^40 elements");
    numel *= size;
    shape.push_back(size);
  }
  if (shape.empty()) j.refuse("must have at least one dimension");
  return shape;
}

// The tensor-parallel split: not split (dim -1, one part), or full_shape[dim]
// cut into `parts` equal slices of at least one row. Checked before anything
// divides by a part's size.
ShardSpec piece_split(const JsonAt& j, const Shape& shape) {
  const ShardSpec s{j.at("dim").get<int>(), j.at("parts").get<int>(), j.at("index").get<int>()};
  const int dims = static_cast<int>(shape.size());
  if (s.dim < -1 || s.dim >= dims)
    j.at("dim").refuse("must be -1 (not split) or a dimension of full_shape, 0 to " + std::to_string(dims - 1));
  const std::int64_t rows = s.dim < 0 ? 1 : shape[static_cast<std::size_t>(s.dim)];
  if (s.parts < 1 || s.parts > rows || rows % s.parts != 0)
    j.at("parts").refuse(s.dim < 0 ? std::string("must be 1 for a parameter that is not split (dim -1)")
                                   : "must divide full_shape[" + std::to_string(s.dim) + "]=" + std::to_string(rows) +
                                         " into equal parts of at least one row");
  if (s.index < 0 || s.index >= s.parts) j.at("index").refuse("must be in [0, parts)");
  return s;
}

ShardPiece piece_of(const JsonAt& j) {
  j.object();
  ShardPiece p;
  p.param = j.at("param").get<std::string>();
  if (p.param.empty()) j.at("param").refuse("must name a parameter");
  std::int64_t numel = 0;
  p.full_shape = piece_shape(j.at("full_shape"), numel);
  p.shard = piece_split(j, p.full_shape);
  const std::int64_t part = numel / p.shard.parts;
  p.offset = j.at("offset").get<std::int64_t>();
  if (p.offset < 0 || p.offset > part)
    j.at("offset").refuse("must be in [0, " + std::to_string(part) + "]: the part's elements");
  p.count = j.at("count").get<std::int64_t>();
  if (p.count < 0 || p.count > part - p.offset)
    j.at("count").refuse("must be in [0, " + std::to_string(part - p.offset) + "]: the piece must end inside its part");
  return p;
}

ShardRecord record_of(const JsonAt& j) {
  j.object();
  ShardRecord r;
  r.file = j.at("file").get<std::string>();
  if (r.file.empty() || r.file.find('/') != std::string::npos || r.file.starts_with("."))
    j.at("file").refuse("must be a plain file name inside the checkpoint's folder");
  r.rank = j.at("rank").get<int>();
  if (r.rank < 0) j.at("rank").refuse("must not be negative");
  r.bytes = j.at("bytes").get<std::int64_t>();
  if (r.bytes < 0) j.at("bytes").refuse("must not be negative");
  const std::string crc = j.at("crc32").get<std::string>();
  if (crc.size() != 8 || crc.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    j.at("crc32").refuse("must be 8 hexadecimal digits");
  r.crc32 = static_cast<std::uint32_t>(std::stoul(crc, nullptr, 16));
  for (const JsonAt& e : j.at("pieces").array().elements()) r.pieces.push_back(piece_of(e));
  return r;
}

// The shards: at least one, each file listed once.
void read_shard_records(const JsonAt& shards, Manifest& m) {
  std::map<std::string, std::size_t> listed;  // file -> its record
  for (const JsonAt& s : shards.array().elements()) {
    m.shards.push_back(record_of(s));
    const auto [it, first] = listed.emplace(m.shards.back().file, m.shards.size() - 1);
    if (!first) s.at("file").refuse("names the file of /shards/" + std::to_string(it->second) + " again");
  }
  if (m.shards.empty()) shards.refuse("must list at least one shard file");
}

// Every element of every parameter lies in some piece: the pieces of one
// parameter agree on its shape and split, every part has pieces, and their
// ranges leave no gap (they may overlap: a parameter replicated over t is
// saved by each tensor-parallel rank). A hole would load as zeros.
void check_coverage(const Manifest& m, const JsonAt& shards) {
  struct Pieces {
    const ShardPiece* first = nullptr;
    std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> ranges;  // by part index: [begin, end)
  };
  std::map<std::string, Pieces> by_param;
  for (std::size_t i = 0; i < m.shards.size(); ++i)
    for (std::size_t k = 0; k < m.shards[i].pieces.size(); ++k) {
      const ShardPiece& p = m.shards[i].pieces[k];
      Pieces& g = by_param[p.param];
      if (g.first == nullptr) g.first = &p;
      const ShardPiece& first = *g.first;
      if (p.full_shape != first.full_shape || p.shard.dim != first.shard.dim || p.shard.parts != first.shard.parts)
        shards.elements()[i].at("pieces").elements()[k].refuse(
            "gives " + cut_text(p.param, 200) + " another full_shape, dim or parts than its first piece");
      g.ranges[p.shard.index].push_back({p.offset, p.offset + p.count});
    }
  for (auto& [param, g] : by_param) {
    const std::int64_t part = shape_numel(g.first->full_shape) / g.first->shard.parts;
    const std::string what = "the pieces of " + cut_text(param, 200) + " (" + std::to_string(g.first->shard.parts) +
                             " part(s) of " + std::to_string(part) + " elements)";
    if (static_cast<int>(g.ranges.size()) != g.first->shard.parts)
      shards.refuse(what + " cover only " + std::to_string(g.ranges.size()) + " of its parts");
    for (auto& [index, ranges] : g.ranges) {
      std::sort(ranges.begin(), ranges.end());
      std::int64_t covered = 0;
      for (const auto& [begin, end] : ranges) {
        if (begin > covered) break;
        covered = std::max(covered, end);
      }
      if (covered < part)
        shards.refuse(what + " leave element " + std::to_string(covered) + " of part " + std::to_string(index) +
                      " uncovered");
    }
  }
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

Manifest manifest_from_json(const json& doc, const std::string& source) {
  const JsonAt j(doc, source);
  j.object();
  if (j.at("format").get<std::string>() != kCheckpointFormat)
    j.at("format").refuse(std::string("must be \"") + kCheckpointFormat + "\"");
  Manifest m;
  const auto counter = [&](const JsonAt& at) {  // a count of steps: an int, not negative
    const int v = at.get<int>();
    if (v < 0) at.refuse("must not be negative");
    return v;
  };
  m.step = counter(j.at("step"));
  m.adamw_steps = counter(j.at("adamw_steps"));
  const JsonAt scaler = j.at("loss_scaler").object();
  m.loss_scale = scaler.at("scale").get<double>();
  if (!(m.loss_scale > 0)) scaler.at("scale").refuse("must be positive");
  m.good_steps = counter(scaler.at("good_steps"));
  m.skipped_steps = counter(scaler.at("skipped"));
  const JsonAt data = j.at("data").object();
  m.next_sample = data.at("next_sample").get<std::int64_t>();
  if (m.next_sample < 0) data.at("next_sample").refuse("must not be negative");
  m.data = data.at("source").get<std::string>();
  m.model = j.at("model").object().value();
  m.plan = j.at("plan").object().value();
  m.optimizer = j.at("optimizer").object().value();
  read_shard_records(j.at("shards"), m);
  check_coverage(m, j.at("shards"));
  return m;
}

Manifest read_manifest(const std::filesystem::path& file) {
  return manifest_from_json(read_json_file(file), file.string());
}

std::string iteration_folder(int step) {
  char name[32];
  std::snprintf(name, sizeof name, "iter_%07d", step);
  return name;
}

std::optional<int> step_of_folder(const std::string& name) {
  const std::string digits = name.starts_with("iter_") ? name.substr(5) : "";
  if (digits.size() < 7 || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const long long step = std::stoll(digits);
  if (step > std::numeric_limits<int>::max() || iteration_folder(static_cast<int>(step)) != name) return std::nullopt;
  return static_cast<int>(step);
}

std::string shard_file_name(int rank) {
  char name[40];
  std::snprintf(name, sizeof name, "rank_%05d.safetensors", rank);
  return name;
}

std::filesystem::path resolve_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + " is not a folder");
  if (fs::exists(dir / kManifestName)) return dir;
  const fs::path latest = dir / kLatestName;
  if (!fs::exists(fs::symlink_status(latest)))
    throw std::runtime_error(dir.string() + " holds no checkpoint: no " + kManifestName + " and no " + kLatestName +
                             " file (an unfinished save leaves no manifest)");
  const std::vector<std::uint8_t> bytes = read_regular_file(latest, 4096);  // never a device read without end
  const std::string name(bytes.begin(), std::find(bytes.begin(), bytes.end(), '\n'));
  if (!step_of_folder(name))
    throw std::runtime_error(latest.string() + " does not name a checkpoint folder (iter_NNNNNNN) inside " +
                             dir.string());
  if (!fs::exists(dir / name / kManifestName))
    throw std::runtime_error((dir / name / kManifestName).string() + " (named by " + latest.string() +
                             ") does not exist");
  return dir / name;
}

bool holds_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return false;
  if (fs::exists(dir / kManifestName) || fs::exists(fs::symlink_status(dir / kLatestName))) return true;
  for (const auto& e : fs::directory_iterator(dir))
    if (step_of_folder(e.path().filename().string()) && e.is_directory() && !e.is_symlink() &&
        fs::exists(e.path() / kManifestName))
      return true;
  return false;
}

}  // namespace ptdp
