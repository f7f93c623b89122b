// Loading into any layout: every parameter's full fp32 weights and moments put
// together from the old pieces, then this rank's shard and owned pieces cut
// out of them by the new geometry. And the checks that refuse a checkpoint
// before any work.
#include <chrono>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/checkpoint_reader.h"
#include "core/config/json_read.h"
#include "core/io/crc32.h"
#include "core/io/read_file.h"

namespace ptdp {

namespace {

namespace fs = std::filesystem;

// (n) fp32: elements [offset, offset + n) of `p`'s shard, taken from its full tensor.
std::vector<float> cut_shard(const Param& p, const std::vector<float>& full, std::int64_t offset, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = full[static_cast<std::size_t>(p.full_index(offset + k))];
  return out;
}

// Weights of every parameter (the tied copy too), and AdamW's state of every target.
void restore_tensors(const TrainingState& state, CheckpointReader& reader) {
  Ops& ops = state.ops;
  const std::vector<OwnedPiece>& pieces = state.pieces;
  const std::map<std::string, Shape> saved = reader.parameters();
  for (Param* p : state.model.params()) {
    const auto it = saved.find(p->name);
    if (it == saved.end() || it->second != p->full_shape)
      throw std::runtime_error(reader.folder().string() + ": parameter " + p->name + " is " +
                               (it == saved.end() ? std::string("missing") : shape_string(it->second)) + ", the model's is " +
                               shape_string(p->full_shape));
    const std::vector<float> master = reader.full("master", p->name);
    const std::vector<float> m = reader.full("exp_avg", p->name), v = reader.full("exp_avg_sq", p->name);
    ops.upload_f32(cut_shard(*p, master, 0, p->value.numel()).data(), p->value);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].param != p) continue;
      AdamW::StateTensors st = state.optimizer.state(i);
      const std::int64_t o = pieces[i].param_offset, n = pieces[i].count;
      ops.upload_f32(cut_shard(*p, master, o, n).data(), st.master);
      ops.upload_f32(cut_shard(*p, m, o, n).data(), st.m);
      ops.upload_f32(cut_shard(*p, v, o, n).data(), st.v);
    }
  }
}

ConfigError ckpt_refused(const std::string& option, const std::string& why) { return {option, why}; }

// The saved model and data order against `cfg`'s.
void check_compatible(const Manifest& m, const Config& cfg, const fs::path& file, const std::string& option,
                      ConfigErrors& e) {
  const nlohmann::json model = to_json(cfg.model);
  for (const auto& [key, value] : model.items())
    if (key != "dropout" && m.model.value(key, nlohmann::json()) != value)
      e.push_back(ckpt_refused(option, file.string() + ": model." + key + " is " + m.model.value(key, nlohmann::json()).dump() +
                                      " in the checkpoint, " + value.dump() + " in this run's config (another model)"));
  for (const char* key : {"seed", "global_batch"})
    if (m.plan.value(key, nlohmann::json()) != to_json(cfg.plan).at(key))
      e.push_back(ckpt_refused(option, file.string() + ": plan." + key + " is " + m.plan.value(key, nlohmann::json()).dump() +
                                      " in the checkpoint, " + to_json(cfg.plan).at(key).dump() +
                                      " in this run's config: the samples would not continue where they stopped"));
}

// Every tensor the manifest's pieces name, in the shard as a float tensor of the piece's count.
void check_piece_tensors(const SafetensorsFile& f, const ShardRecord& r, const std::string& option, ConfigErrors& e) {
  for (const ShardPiece& piece : r.pieces)
    for (const char* kind : {"master", "exp_avg", "exp_avg_sq"}) {
      const std::string name = piece_tensor_name(kind, piece);
      const std::string where = f.path().string() + ": tensor \"" + cut_text(name, 200) + "\"";
      if (!f.has(name)) {
        e.push_back(ckpt_refused(option, where + " (a piece the manifest lists) is missing"));
        continue;
      }
      const SafetensorsFile::Entry& entry = f.entry(name);
      if (entry.dtype == DType::i32) e.push_back(ckpt_refused(option, where + " is I32, not a float tensor"));
      else if (shape_numel(entry.shape) != piece.count)
        e.push_back(ckpt_refused(option, where + " holds " + std::to_string(shape_numel(entry.shape)) +
                                             " elements; the manifest's piece has count " +
                                             std::to_string(piece.count)));
    }
}

// Each listed shard: present, of the manifest's size and CRC-32, a safetensors
// file the reader accepts (a regular file, its header checked) holding every
// piece's tensors. One shard in memory at a time.
void check_shards(const Manifest& m, const fs::path& folder, const std::string& option, ConfigErrors& e) {
  for (const ShardRecord& r : m.shards) {
    const fs::path path = folder / r.file;
    if (!fs::exists(fs::symlink_status(path))) {
      e.push_back(ckpt_refused(option, path.string() + " (listed in the manifest) is missing"));
      continue;
    }
    try {
      std::vector<std::uint8_t> bytes = read_regular_file(path);
      if (static_cast<std::int64_t>(bytes.size()) != r.bytes)
        e.push_back(ckpt_refused(option, path.string() + " holds " + std::to_string(bytes.size()) +
                                             " bytes, the manifest says " + std::to_string(r.bytes) + " (truncated?)"));
      else if (crc32(bytes.data(), bytes.size()) != r.crc32)
        e.push_back(ckpt_refused(option, path.string() + ": CRC-32 differs from the manifest's (corrupted)"));
      else
        check_piece_tensors(SafetensorsFile(path, std::move(bytes)), r, option, e);
    } catch (const std::runtime_error& ex) {  // not a regular file, unreadable, or SafetensorsError
      e.push_back(ckpt_refused(option, ex.what()));
    }
  }
}

}  // namespace

CheckpointIo load_checkpoint(const TrainingState& state, Communicator& host, const fs::path& dir, Manifest* manifest) {
  CheckpointIo io;
  host.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  CheckpointReader reader(dir);
  io.folder = reader.folder();
  const Manifest& m = reader.manifest();
  restore_tensors(state, reader);
  state.optimizer.set_steps_taken(m.adamw_steps);
  state.loss_scaler.restore(m.loss_scale, m.good_steps, m.skipped_steps);
  io.bytes = reader.bytes_read();
  host.barrier();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  io.seconds = host.all_reduce_host(seconds, ReduceOp::max);
  io.bytes_total = static_cast<std::int64_t>(host.all_reduce_host(static_cast<double>(io.bytes), ReduceOp::sum));
  io.bytes_max = static_cast<std::int64_t>(host.all_reduce_host(static_cast<double>(io.bytes), ReduceOp::max));
  if (manifest != nullptr) *manifest = m;
  return io;
}

ConfigErrors checkpoint_problems(const fs::path& dir, const Config& cfg, const std::string& option) {
  ConfigErrors e;
  try {
    const fs::path folder = resolve_checkpoint(dir);
    const Manifest m = read_manifest(folder / kManifestName);
    check_compatible(m, cfg, folder / kManifestName, option, e);
    check_shards(m, folder, option, e);
  } catch (const std::exception& ex) {
    e.push_back(ckpt_refused(option, ex.what()));
  }
  return e;
}

}  // namespace ptdp
