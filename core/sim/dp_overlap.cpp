// The runtime's gradient buckets on a rank, when each is final, and the channel that reduces them.
#include "core/sim/dp_overlap.h"

#include <algorithm>
#include <cstdint>

#include "core/accounting/memory_model.h"
#include "core/config/chunk_layout.h"
#include "core/optim/grad_reduce.h"

namespace ptdp {

namespace {

// A run of gradient elements in buffer order: one layer, the embedding's
// position table, the head's layernorm or the tied word embedding.
struct GradPiece {
  std::int64_t numel = 0;
  BucketNeed need;
  bool deferred = false;
};

// The sizes chunk_parameter_count gives, taken apart: a layer, the word
// embedding (tied), the position table and the head's own parameters.
struct PieceSizes {
  std::int64_t layer, word, position, head;
};

PieceSizes piece_sizes(const Model& m, const RankDims& r) {
  const auto count = [&](int layers, bool emb, bool head) {
    return chunk_parameter_count(m, r, ChunkLayout{0, 0, layers, emb, head});
  };
  const std::int64_t emb = count(0, true, false), head = count(0, false, true), both = count(0, true, true);
  const std::int64_t word = emb + head - both;
  return {count(1, false, false), word, emb - word, head - word};
}

// The rank's gradients in buffer order (RankModel: chunk after chunk, each
// embedding, layers, head), each with its place in its chunk's last backward:
// the share of that backward's modelled time after which it is final.
std::vector<GradPiece> grad_pieces(const Config& cfg, const RankDims& r, const LayerCosts& layer,
                                   const EdgeCosts& edges, int pp_rank) {
  const PieceSizes size = piece_sizes(cfg.model, r);
  const double t_layer = layer.backward.total() + layer.recompute.total();
  std::vector<GradPiece> out;
  for (int c = 0; c < cfg.plan.virtual_stages; ++c) {
    const ChunkLayout l = chunk_layout(cfg.model, cfg.plan, pp_rank, c);
    const double t_head = l.has_head ? edges.head_backward.total() : 0.0;
    const double total = t_head + l.num_layers * t_layer + (l.has_embedding ? edges.embedding_backward.total() : 0.0);
    const auto share = [&](double t) { return total > 0 ? std::min(1.0, t / total) : 1.0; };
    if (l.has_embedding) {
      out.push_back({size.word, {c, 1.0}, true});
      out.push_back({size.position, {c, 1.0}, false});
    }
    for (int i = 0; i < l.num_layers; ++i)  // visited from the last layer down
      out.push_back({size.layer, {c, share(t_head + (l.num_layers - i) * t_layer)}, false});
    if (l.has_head) {
      out.push_back({size.head, {c, share(t_head)}, false});
      if (!l.has_embedding) out.push_back({size.word, {c, 1.0}, true});
    }
  }
  return out;
}

// The runtime's bucket boundaries over `pieces` (schedule_buckets): its
// readiness order is not used here, so every piece names one site.
std::vector<GradBucket> bucket_bounds(const std::vector<GradPiece>& pieces, std::int64_t align) {
  std::vector<BucketParam> params;
  std::int64_t total = 0;
  for (const GradPiece& g : pieces) {
    params.push_back({g.numel, {BackwardSite{0, 0}}, g.deferred});
    total += g.numel;
  }
  total = (total + align - 1) / align * align;  // pack_grads' padding
  return schedule_buckets(params, {BackwardSite{0, 0}}, bucket_elements_for(total), align);
}

}  // namespace

DpOverlap::DpOverlap(const Config& cfg, const RankDims& r, const LayerCosts& layer, const EdgeCosts& edges,
                     const CommModel& comm, Placement dp, int pp_rank) {
  const Plan& p = cfg.plan;
  const std::vector<GradPiece> pieces = grad_pieces(cfg, r, layer, edges, pp_rank);
  std::vector<std::int64_t> ends;  // end of each piece in the buffer
  std::int64_t at = 0;
  for (const GradPiece& g : pieces) ends.push_back(at += g.numel);
  for (const GradBucket& b : bucket_bounds(pieces, p.shards_optimizer() ? p.dp : 1)) {
    const double bytes = 4.0 * static_cast<double>(b.count);  // fp32 gradients
    DpBucket out{p.shards_optimizer() ? comm.reduce_scatter(bytes, dp) : comm.all_reduce(bytes, dp), false, {}};
    // The pieces overlapping [offset, offset + count): padding past the end overlaps none.
    auto i = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), b.offset) - ends.begin());
    for (; i < pieces.size() && ends[i] - pieces[i].numel < b.offset + b.count; ++i) {
      const GradPiece& g = pieces[i];
      out.deferred = out.deferred || g.deferred;
      if (!out.needs.empty() && out.needs.back().chunk == g.need.chunk)
        out.needs.back().fraction = std::max(out.needs.back().fraction, g.need.fraction);
      else
        out.needs.push_back(g.need);
    }
    buckets_.push_back(std::move(out));
  }
}

double DpOverlap::end(double now, const std::vector<GradSpan>& last) const {
  // When each bucket is final, in launch order.
  std::vector<std::pair<double, double>> ready;  // (final at, reduction time)
  ready.reserve(buckets_.size());
  for (const DpBucket& b : buckets_) {
    double t = b.deferred ? now : 0.0;
    for (const BucketNeed& n : b.needs) {
      const GradSpan s = static_cast<std::size_t>(n.chunk) < last.size() ? last[static_cast<std::size_t>(n.chunk)]
                                                                           : GradSpan{};
      if (s.start_s < 0) t = std::max(t, now);
      else if (s.op == Op::backward_weight) t = std::max(t, s.end_s);  // W reports its chunk at its end
      else t = std::max(t, s.start_s + n.fraction * (s.end_s - s.start_s));
    }
    ready.emplace_back(t, b.comm_s);
  }
  std::stable_sort(ready.begin(), ready.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double free = 0;  // the channel: one bucket at a time
  for (const auto& [t, comm_s] : ready) free = std::max(free, t) + comm_s;
  return std::max(free, now);
}

}  // namespace ptdp
