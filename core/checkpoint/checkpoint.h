// Saving and loading a training run's state (docs/checkpoint-format.md). Every
// rank writes its own safetensors shard (the fp32 weights and AdamW's moments
// of the pieces it owns) durably; rank 0 then writes the manifest and the
// `latest` pointer, so a save interrupted anywhere leaves the previous
// checkpoint the one that loads. Loading reads, for every parameter piece the
// new layout gives this rank, the old pieces that cover it, so a checkpoint
// loads into any (t, p, d) and with or without the distributed optimizer.
//
// Randomness: sample i is a pure function of (seed, i) (core/data) and the
// runtime draws nothing else at run time (initial weights are a pure function
// of (seed, name, index); dropout is not run), so the step alone is the data
// position: iteration k trains on samples [k·B, (k+1)·B).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/checkpoint/manifest.h"
#include "core/checkpoint/training_state.h"
#include "core/comm/communicator.h"

namespace ptdp {

// One save or load.
struct CheckpointIo {
  std::int64_t bytes = 0;        // this rank's shard (save), the shard bytes it read (load)
  std::int64_t bytes_total = 0;  // summed over ranks
  std::int64_t bytes_max = 0;    // the largest rank's
  double seconds = 0;            // the slowest rank's, first barrier to last
  std::filesystem::path folder;  // the checkpoint's folder (DIR/iter_NNNNNNN)
};

// What a save removes once it is durable (only folders ptdp made: checkpoint_folders.h).
struct SaveOptions {
  int keep = 0;               // keep the newest `keep` finished checkpoints of DIR (0: all)
  std::vector<int> replace;   // --overwrite: the steps of another run's checkpoints in DIR
};

// Saves the state after `step` iterations into DIR/iter_NNNNNNN (rank 0 makes
// it and writes its marker first; every file goes through a StagedFile,
// durably, never into a folder that is a link) and points DIR/latest at it;
// then prunes DIR as `options` says. `data` describes the token source.
// Collective over `host` (the ranks of the trainer's world, in the same
// order). Throws std::runtime_error naming the file when a write fails or the
// folder may not be written.
CheckpointIo save_checkpoint(const TrainingState& state, Communicator& host, const std::filesystem::path& dir, int step,
                             const SaveOptions& options, const std::string& data);

// Loads the checkpoint `dir` names (a checkpoint folder or a save directory
// with `latest`) into `state`, whose layout may differ from the saved one.
// Fills `manifest` (may be null). Collective over `host`. Throws
// std::runtime_error naming the file when a shard cannot be read or lacks an element.
CheckpointIo load_checkpoint(const TrainingState& state, Communicator& host, const std::filesystem::path& dir,
                             Manifest* manifest = nullptr);

// What refuses `dir` as a checkpoint to continue `cfg` from: no manifest, a
// manifest that does not parse or breaks a rule (read_manifest), another model
// (shape, vocabulary) or another data order (plan.seed, plan.global_batch), a
// listed shard that is missing, not a regular file, of another size, whose
// CRC-32 differs, whose safetensors header is refused (SafetensorsFile) or
// that lacks a piece's tensor (or holds it with another element count or a
// dtype that is no float). Each error names the file. Reads every shard, one
// at a time (rank 0 runs it before any work).
ConfigErrors checkpoint_problems(const std::filesystem::path& dir, const Config& cfg, const std::string& option);

}  // namespace ptdp
