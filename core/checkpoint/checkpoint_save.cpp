// Saving: rank 0's marker, each rank's shard streamed durably, then rank 0's
// manifest, `latest` pointer and the pruning of old checkpoints (only folders
// ptdp made: checkpoint_folders.h).
#include <chrono>

#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/checkpoint_folders.h"
#include "core/checkpoint/durable_file.h"
#include "core/checkpoint/safetensors.h"
#include "core/comm/host_gather.h"
#include "core/config/json_read.h"
#include "core/io/staged_file.h"

namespace ptdp {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One piece of optimizer state this rank saves, and its AdamW target.
struct SavedPiece {
  ShardPiece piece;
  std::size_t target = 0;
};

// What this rank writes: without the distributed optimizer the state is
// replicated over d, so data-parallel rank 0 writes it; with it, every rank
// its owned pieces. The last stage's copy of the tied word embedding is the
// first stage's (same gradient, same update): never written; nor is a shard
// held by several tensor-parallel ranks (a shared kv head, kv_sharing.h)
// on any but the one that counts it.
std::vector<SavedPiece> pieces_to_save(const TrainingState& state) {
  std::vector<SavedPiece> out;
  if (!state.config.plan.shards_optimizer() && state.dp_rank != 0) return out;
  const std::vector<OwnedPiece>& pieces = state.pieces;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Param& p = *pieces[i].param;
    if (p.tied_copy || (p.shard.dim >= 0 && !p.count_in_norm)) continue;
    out.push_back({{p.name, p.full_shape, p.shard, pieces[i].param_offset, pieces[i].count}, i});
  }
  return out;
}

// Writes this rank's shard, streamed through a StagedFile (an unpredictable
// temporary in the iter folder, which must not be a link); returns its record
// (size and CRC-32 of the bytes as they were written).
ShardRecord write_shard(const TrainingState& state, const fs::path& folder, int rank, int step) {
  ShardRecord rec;
  rec.file = shard_file_name(rank);
  rec.rank = rank;
  std::vector<std::vector<float>> host;          // keeps the bytes alive until written
  std::vector<std::vector<std::uint8_t>> weights;  // 16-bit runs: the weights as they train
  std::vector<TensorRef> tensors;
  const auto saved = pieces_to_save(state);
  Ops& ops = state.ops;
  const DType compute = ops.compute_dtype();
  host.reserve(saved.size() * 4);
  weights.reserve(saved.size());
  for (const SavedPiece& s : saved) {
    const AdamW::StateTensors st = state.optimizer.state(s.target);
    for (const auto& [kind, tensor] : {std::pair{"master", &st.master}, {"exp_avg", &st.m}, {"exp_avg_sq", &st.v}}) {
      host.emplace_back(static_cast<std::size_t>(tensor->numel()));
      ops.download_f32(*tensor, host.back().data());
      tensors.push_back({piece_tensor_name(kind, s.piece), DType::f32, tensor->shape(), host.back().data()});
    }
    // Beside fp32 masters, the 16-bit weights too, as Megatron-LM's checkpoints
    // hold them (core/accounting/checkpoint_size.h counts 14 bytes a parameter):
    // readable without ptdp; a load rebuilds them from the masters.
    if (compute != DType::f32) {
      const Param& p = *state.pieces[s.target].param;
      const Tensor piece = p.value.view({p.value.numel()}).rows(s.piece.offset, s.piece.count);
      host.emplace_back(static_cast<std::size_t>(s.piece.count));
      ops.download_f32(piece, host.back().data());
      weights.push_back(encode_f32(host.back().data(), host.back().size(), compute));
      tensors.push_back({piece_tensor_name("weight", s.piece), compute, {s.piece.count}, weights.back().data()});
    }
    rec.pieces.push_back(s.piece);
  }
  // A failed write (a full disk) leaves no temporary behind: the StagedFile removes it.
  StagedFile out(folder / rec.file, {.durable = true, .folder_no_follow = true});
  const WrittenFile written = write_safetensors(
      out, tensors, {{"format", kCheckpointFormat}, {"rank", std::to_string(rank)}, {"step", std::to_string(step)}});
  out.commit();
  rec.bytes = written.bytes;
  rec.crc32 = written.crc32;
  return rec;
}

std::vector<double> as_doubles(const std::string& s) { return {s.begin(), s.end()}; }

std::string as_string(const std::vector<double>& d) {
  std::string s;
  for (double c : d) s.push_back(static_cast<char>(static_cast<int>(c)));
  return s;
}

Manifest manifest_of(const TrainingState& state, int step, const std::string& data, std::vector<ShardRecord> shards) {
  const Config& cfg = state.config;
  Manifest m;
  m.step = step;
  m.adamw_steps = state.optimizer.steps_taken();
  m.loss_scale = state.loss_scaler.scale();
  m.good_steps = state.loss_scaler.good_steps();
  m.skipped_steps = state.loss_scaler.skipped();
  m.next_sample = static_cast<std::int64_t>(step) * cfg.plan.global_batch;
  m.data = data;
  m.model = to_json(cfg.model);
  m.plan = to_json(cfg.plan);
  m.optimizer = to_json(cfg.optimizer);
  m.shards = std::move(shards);
  return m;
}

}  // namespace

CheckpointIo save_checkpoint(const TrainingState& state, Communicator& host, const fs::path& dir, int step,
                             const SaveOptions& options, const std::string& data) {
  CheckpointIo io;
  io.folder = dir / iteration_folder(step);
  host.barrier();
  const auto t0 = Clock::now();
  std::string refused;  // rank 0's: the folder cannot be written (a link, a folder ptdp did not make)
  if (host.rank() == 0) try {
      prepare_save_folder(dir, step);  // the marker first: the folder is ptdp's from now on
    } catch (const std::exception& e) {
      refused = e.what();
    }
  if (host.all_reduce_host(refused.empty() ? 0.0 : 1.0, ReduceOp::max) > 0)  // every rank stops, none writes
    throw std::runtime_error(refused.empty() ? "rank 0 could not prepare " + io.folder.string() : refused);
  const ShardRecord mine = write_shard(state, io.folder, host.rank(), step);
  io.bytes = mine.bytes;
  const auto records = gather_host(host, as_doubles(to_json(mine).dump()));
  if (host.rank() == 0) {
    std::vector<ShardRecord> shards;
    for (std::size_t r = 0; r < records.size(); ++r) {
      const std::string source = "the shard record of rank " + std::to_string(r);
      shards.push_back(shard_record_from_json(parse_json(as_string(records[r]), source), source));
    }
    write_durably(io.folder / kManifestName, to_json(manifest_of(state, step, data, std::move(shards))).dump(1));
    // `latest` in the save directory as the path resolves: the user may name a
    // link to it, and the folder the pointer goes into is then no link.
    write_durably(fs::canonical(dir) / kLatestName, iteration_folder(step) + "\n");
    prune_checkpoints(dir, step, options.keep, options.replace);
  }
  host.barrier();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  io.seconds = host.all_reduce_host(seconds, ReduceOp::max);
  io.bytes_total = static_cast<std::int64_t>(host.all_reduce_host(static_cast<double>(io.bytes), ReduceOp::sum));
  io.bytes_max = static_cast<std::int64_t>(host.all_reduce_host(static_cast<double>(io.bytes), ReduceOp::max));
  return io;
}

}  // namespace ptdp
