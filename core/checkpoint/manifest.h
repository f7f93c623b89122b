// A checkpoint's manifest (DIR/iter_NNNNNNN/manifest.json, docs/checkpoint-format.md):
// the step, the optimizer's and loss scaler's counters, the data position, the
// model, plan and optimizer it was saved under, and every rank's shard with its
// size, CRC-32 and the pieces it holds. Written last, so a checkpoint without
// one is an unfinished save and never loads.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/model/param.h"

namespace ptdp {

inline constexpr const char* kCheckpointFormat = "ptdp.checkpoint/1";
inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kLatestName = "latest";

// Elements [offset, offset + count) of one tensor-parallel shard of parameter
// `param` (flattened row-major), as the shard's tensors
// "<kind>/<param>/<offset>" for kind master, exp_avg, exp_avg_sq hold them.
// Under the distributed optimizer a piece is a data-parallel rank's owned
// range; otherwise the whole shard (offset 0, count its numel).
struct ShardPiece {
  std::string param;
  Shape full_shape;
  ShardSpec shard;  // the tensor-parallel geometry: Param::full_index maps the elements back
  std::int64_t offset = 0, count = 0;

  // A Param with this geometry (no tensors): its full_index places the elements.
  Param geometry() const;
};

struct ShardRecord {
  std::string file;  // relative to the checkpoint's folder
  int rank = 0;      // the world rank that wrote it
  std::int64_t bytes = 0;
  std::uint32_t crc32 = 0;
  std::vector<ShardPiece> pieces;
};

struct Manifest {
  int step = 0;                   // iterations completed; training resumes at iteration `step`
  int adamw_steps = 0;            // optimizer steps taken (fp16 skips take none)
  double loss_scale = 1;          // LossScaler state
  int good_steps = 0, skipped_steps = 0;
  std::int64_t next_sample = 0;   // step · global_batch: the first sample not yet trained on
  std::string data;               // the token source's description
  nlohmann::json model, plan, optimizer;  // as config_write writes them
  std::vector<ShardRecord> shards;
};

// The tensor name of `kind` ("master", "exp_avg", "exp_avg_sq") of a piece.
std::string piece_tensor_name(const std::string& kind, const ShardPiece& piece);

nlohmann::json to_json(const ShardRecord& r);
nlohmann::json to_json(const Manifest& m);
// Throws JsonRefused naming `source` and the field.
ShardRecord shard_record_from_json(const nlohmann::json& j, const std::string& source);
// A parsed manifest, every field checked: counters not negative, at least one
// shard, each file named once; each piece's shape (sizes >= 1, at most 2^40
// elements, products taken without overflow), split (dim -1 with one part, or
// parts dividing full_shape[dim] into slices of at least one row: checked
// before anything divides) and range inside its part; and every element of
// every parameter in some piece. Throws JsonRefused naming `source`, the JSON
// pointer and the rule.
Manifest manifest_from_json(const nlohmann::json& doc, const std::string& source);
// `file` read by the strict reader (a key named twice is refused) and checked as above.
Manifest read_manifest(const std::filesystem::path& file);

// "iter_0000003": the folder of the checkpoint after `step` iterations.
std::string iteration_folder(int step);
// The step a folder named by iteration_folder holds ("iter_0000003": 3), or
// nullopt for any other name ("iter_notes", "iter_3").
std::optional<int> step_of_folder(const std::string& name);
// "rank_00002.safetensors": the shard world rank `rank` writes.
std::string shard_file_name(int rank);

// The folder holding the manifest that `dir` names: `dir` itself when it has
// one, else the folder its `latest` file (a regular file of at most 4 KiB)
// names. Throws std::runtime_error naming what is missing.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& dir);

// Whether `dir` holds any checkpoint (a manifest, a `latest` or an iter_NNNNNNN folder with a manifest).
bool holds_checkpoint(const std::filesystem::path& dir);

}  // namespace ptdp
