// What rank r of the d data-parallel ranks owns: the distributed optimizer's
// owned pieces, and for ZeRO-2/3 (dp_sharding gradients, parameters) the
// units its gradients and weights move in. Letters: d data-parallel size, N a
// padded flat space of a rank's parameters, c a bucket's or unit's size.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/model/model_chunk.h"
#include "core/optim/bucket_schedule.h"

namespace ptdp {

class RankModel;

// Elements [param_offset, param_offset + count) of `param` (flattened) are
// owned, at owned[owned_offset, owned_offset + count).
struct OwnedPiece {
  Param* param = nullptr;
  std::int64_t param_offset = 0;
  std::int64_t owned_offset = 0;
  std::int64_t count = 0;
};

// The pieces rank `r` of `d` owns, in owned-buffer order: `params` lie
// back to back from 0 in a flat space that `buckets` (each a multiple of d, in
// any order) cover; rank r owns block r of each bucket (o, c), at o/d of its
// (N/d) owned buffer. Padding belongs to no piece.
std::vector<OwnedPiece> owned_pieces(const ParamList& params, std::vector<GradBucket> buckets, int dp, int r);
// The same with params[i] starting at `offsets[i]` (increasing; gaps are padding).
std::vector<OwnedPiece> owned_pieces(const ParamList& params, const std::vector<std::int64_t>& offsets,
                                     std::vector<GradBucket> buckets, int dp, int r);

// ZeRO-2/3's unit: parameters whose gradients are reduce-scattered together
// and (ZeRO-3) whose weights are all-gathered together: one chunk part's (a
// layer, the head, the embedding), or one parameter that several parts use or
// that is summed with another stage (the tied word embedding: its own unit on
// both stages, so rank r owns the same rows of it on both).
struct ShardUnit {
  ParamList params;
  std::vector<std::int64_t> at;  // params[i] starts at offset + at[i]
  std::int64_t offset = 0;       // in the flat space, a multiple of d
  std::int64_t count = 0;        // elements, padded to a multiple of d
};

// The units a part uses, and those whose gradients no later part of the
// chunk's backward adds to (reduce-scattered when the part leaves).
struct PartUnits {
  std::vector<int> units;
  std::vector<int> flush;
};

struct ShardLayout {
  int dp = 1;
  std::vector<ShardUnit> units;    // back to back, in forward order
  std::int64_t size = 0;           // N: the units' padded sizes summed
  std::vector<std::vector<int>> backward_order;  // per chunk: its parts (ChunkPart numbering), backward order
  std::map<std::pair<int, int>, PartUnits> parts;  // (chunk, part) -> its units
  std::map<const Param*, int> unit_of;

  const PartUnits& part(int chunk, int part) const;
  static constexpr int kNoPart = -1000;
  // The part after `part` in chunk `chunk`'s pass (backward order, or forward
  // order when `forward`); kNoPart after the last.
  int next_part(int chunk, int part, bool forward) const;
  // Rank r's owned pieces: block r of every unit.
  std::vector<OwnedPiece> owned_pieces(int r) const;
};

// From each chunk's parts in backward order (ModelChunk::backward_parts()),
// the tied word copy (RankModel::tied_word(), may be null) and d.
ShardLayout shard_layout(const std::vector<std::vector<ChunkPart>>& chunks, const Param* tied_word, int dp);
ShardLayout shard_layout(RankModel& model, int dp);

}  // namespace ptdp
