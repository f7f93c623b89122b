// Owned pieces of a flat space, and ZeRO-2/3's units: which parameters move
// together, where they lie, and which part ends each unit's gradients.
#include "core/optim/shard_layout.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

#include "core/model/rank_model.h"

namespace ptdp {

std::vector<OwnedPiece> owned_pieces(const ParamList& params, std::vector<GradBucket> buckets, int dp, int r) {
  std::vector<std::int64_t> offsets;
  std::int64_t at = 0;
  for (const Param* p : params) {
    offsets.push_back(at);
    at += p->numel();
  }
  return owned_pieces(params, offsets, std::move(buckets), dp, r);
}

std::vector<OwnedPiece> owned_pieces(const ParamList& params, const std::vector<std::int64_t>& offsets,
                                     std::vector<GradBucket> buckets, int dp, int r) {
  std::sort(buckets.begin(), buckets.end(),
            [](const GradBucket& a, const GradBucket& b) { return a.offset < b.offset; });
  std::vector<OwnedPiece> out;
  std::size_t i = 0;  // first parameter that may reach into the bucket
  for (const GradBucket& b : buckets) {
    if (b.count % dp != 0) throw std::invalid_argument("owned_pieces: a bucket is not a multiple of d");
    const std::int64_t block = b.count / dp, lo = b.offset + r * block, hi = lo + block;
    for (; i < params.size() && offsets[i] + params[i]->numel() <= lo; ++i) {
    }
    for (std::size_t k = i; k < params.size() && offsets[k] < hi; ++k) {
      const std::int64_t first = offsets[k], last = first + params[k]->numel();
      const std::int64_t a = std::max(first, lo), e = std::min(last, hi);
      if (e > a) out.push_back({params[k], a - first, b.offset / dp + (a - lo), e - a});
    }
  }
  return out;
}

const PartUnits& ShardLayout::part(int chunk, int p) const {
  const auto it = parts.find({chunk, p});
  if (it == parts.end())
    throw std::logic_error("ShardLayout: chunk " + std::to_string(chunk) + " has no part " + std::to_string(p));
  return it->second;
}

int ShardLayout::next_part(int chunk, int p, bool forward) const {
  const std::vector<int>& order = backward_order[static_cast<std::size_t>(chunk)];
  const auto it = std::find(order.begin(), order.end(), p);
  if (it == order.end()) return kNoPart;
  if (forward) return it == order.begin() ? kNoPart : *(it - 1);
  return it + 1 == order.end() ? kNoPart : *(it + 1);
}

std::vector<OwnedPiece> ShardLayout::owned_pieces(int r) const {
  ParamList params;
  std::vector<std::int64_t> offsets;
  std::vector<GradBucket> buckets;
  for (const ShardUnit& u : units) {
    for (std::size_t i = 0; i < u.params.size(); ++i) {
      params.push_back(u.params[i]);
      offsets.push_back(u.offset + u.at[i]);
    }
    buckets.push_back({u.offset, u.count, 0});
  }
  return ptdp::owned_pieces(params, offsets, std::move(buckets), dp, r);
}

namespace {

// Units in forward order: a part's own parameters as one unit, and a
// parameter used by several parts (or the tied copy) as a unit of its own.
void assign_units(ShardLayout& l, const std::vector<std::vector<ChunkPart>>& chunks, const Param* tied) {
  std::map<const Param*, int> uses;
  for (const auto& parts : chunks)
    for (const ChunkPart& part : parts)
      for (const Param* p : part.params) ++uses[p];
  for (std::size_t c = 0; c < chunks.size(); ++c)
    for (auto part = chunks[c].rbegin(); part != chunks[c].rend(); ++part) {
      ShardUnit own;
      for (Param* p : part->params) {
        if (l.unit_of.count(p) > 0) continue;
        if (uses[p] == 1 && p != tied) {
          own.params.push_back(p);
          continue;
        }
        l.unit_of[p] = static_cast<int>(l.units.size());
        l.units.push_back({{p}, {}, 0, 0});
      }
      if (own.params.empty()) continue;
      for (const Param* p : own.params) l.unit_of[p] = static_cast<int>(l.units.size());
      l.units.push_back(std::move(own));
    }
}

// Offsets, each unit padded to a multiple of d.
void place_units(ShardLayout& l) {
  for (ShardUnit& u : l.units) {
    std::int64_t n = 0;
    for (const Param* p : u.params) {
      u.at.push_back(n);
      n += p->numel();
    }
    u.offset = l.size;
    u.count = (n + l.dp - 1) / l.dp * l.dp;
    l.size += u.count;
  }
}

// Each part's units; a unit flushes after the last part of the chunk's backward that uses it.
void map_parts(ShardLayout& l, const std::vector<std::vector<ChunkPart>>& chunks) {
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    std::set<int> seen;  // units an earlier part of the forward (a later one of the backward) uses
    std::vector<int>& order = l.backward_order.emplace_back();
    for (const ChunkPart& part : chunks[c]) order.push_back(part.part);
    for (auto part = chunks[c].rbegin(); part != chunks[c].rend(); ++part) {
      PartUnits pu;
      for (const Param* p : part->params) {
        const int u = l.unit_of.at(p);
        if (std::find(pu.units.begin(), pu.units.end(), u) == pu.units.end()) pu.units.push_back(u);
      }
      for (int u : pu.units)
        if (seen.insert(u).second) pu.flush.push_back(u);
      l.parts[{static_cast<int>(c), part->part}] = std::move(pu);
    }
  }
}

}  // namespace

ShardLayout shard_layout(const std::vector<std::vector<ChunkPart>>& chunks, const Param* tied_word, int dp) {
  if (dp < 1) throw std::invalid_argument("shard_layout: d must be positive, got " + std::to_string(dp));
  ShardLayout l;
  l.dp = dp;
  assign_units(l, chunks, tied_word);
  place_units(l);
  map_parts(l, chunks);
  return l;
}

ShardLayout shard_layout(RankModel& model, int dp) {
  std::vector<std::vector<ChunkPart>> chunks;
  for (int c = 0; c < model.num_chunks(); ++c) chunks.push_back(model.chunk(c).backward_parts());
  return shard_layout(chunks, model.tied_word(), dp);
}

}  // namespace ptdp
