// Full tensors from a checkpoint's pieces: each element placed by full index.
#include "core/checkpoint/checkpoint_reader.h"

#include <stdexcept>

namespace ptdp {

CheckpointReader::CheckpointReader(const std::filesystem::path& folder)
    : folder_(resolve_checkpoint(folder)), manifest_(read_manifest(folder_ / kManifestName)) {}

std::map<std::string, Shape> CheckpointReader::parameters() const {
  std::map<std::string, Shape> out;
  for (const ShardRecord& r : manifest_.shards)
    for (const ShardPiece& p : r.pieces) out[p.param] = p.full_shape;
  return out;
}

const SafetensorsFile& CheckpointReader::shard(const ShardRecord& r) {
  auto& slot = open_[r.file];
  if (!slot) {
    const std::filesystem::path path = folder_ / r.file;
    if (!std::filesystem::exists(path))
      throw std::runtime_error(path.string() + " (listed in " + (folder_ / kManifestName).string() + ") is missing");
    slot = std::make_unique<SafetensorsFile>(path);
    if (static_cast<std::int64_t>(slot->file_bytes()) != r.bytes)
      throw std::runtime_error(path.string() + " holds " + std::to_string(slot->file_bytes()) +
                               " bytes; the manifest says " + std::to_string(r.bytes) + " (truncated or replaced)");
    bytes_read_ += r.bytes;
  }
  return *slot;
}

// (full numel) fp32: every piece of `param` written where its geometry puts it.
std::vector<float> CheckpointReader::full(const std::string& kind, const std::string& param) {
  std::vector<float> out;
  std::vector<bool> covered;
  for (const ShardRecord& r : manifest_.shards)
    for (const ShardPiece& piece : r.pieces) {
      if (piece.param != param) continue;
      if (out.empty()) {
        out.assign(static_cast<std::size_t>(shape_numel(piece.full_shape)), 0.0f);
        covered.assign(out.size(), false);
      }
      const std::vector<float> values = shard(r).read_f32(piece_tensor_name(kind, piece));
      if (static_cast<std::int64_t>(values.size()) != piece.count)
        throw std::runtime_error((folder_ / r.file).string() + ": " + piece_tensor_name(kind, piece) + " holds " +
                                 std::to_string(values.size()) + " elements; the manifest says " +
                                 std::to_string(piece.count));
      const Param where = piece.geometry();
      for (std::int64_t k = 0; k < piece.count; ++k) {
        const auto f = static_cast<std::size_t>(where.full_index(piece.offset + k));
        if (f >= out.size()) throw std::runtime_error(folder_.string() + ": a piece of " + param + " lies outside it");
        out[f] = values[static_cast<std::size_t>(k)];
        covered[f] = true;
      }
    }
  if (out.empty()) throw std::runtime_error(folder_.string() + " holds no parameter " + param);
  for (bool c : covered)
    if (!c) throw std::runtime_error(folder_.string() + ": the shards leave elements of " + kind + " of " + param + " uncovered");
  return out;
}

}  // namespace ptdp
