// This rank's share of the GPT: its v model chunks (virtual stages c·p + r),
// holding the tensor-parallel shards of their parameters. All gradients live
// in one flat fp32 buffer, so data-parallel reduction runs over a few large
// buckets instead of one message per parameter; when the data-parallel group
// shards gradients (ZeRO-2/3) there is no such buffer: each part's gradients
// live in transient buffers its PartResidency binds (part_residency.h).
#pragma once
#include <memory>
#include <vector>

#include "core/model/model_chunk.h"

namespace ptdp {

class RankModel {
 public:
  RankModel(ModelContext& ctx, int pp_rank);

  int num_chunks() const { return static_cast<int>(chunks_.size()); }
  ModelChunk& chunk(int c) { return *chunks_[static_cast<std::size_t>(c)]; }
  const ParamList& params() const { return params_; }

  // The word embedding copy that must be summed with the other end of the
  // pipeline (first or last stage when p > 1); null otherwise.
  Param* tied_word() const { return tied_word_; }

  // All gradients, contiguous, fp32 (every Param::grad is a view into it);
  // undefined when the data-parallel group shards gradients.
  Tensor& grad_buffer() { return grads_; }
  // Data-parallel sharding: every chunk's parts run between residency's enter and leave.
  void attach(PartResidency& residency);
  void zero_grads();

  // Parameter elements on this rank (its shards).
  std::int64_t num_parameters() const;

 private:
  void collect_params();

  ModelContext& ctx_;
  std::vector<std::unique_ptr<ModelChunk>> chunks_;
  ParamList params_;
  Param* tied_word_ = nullptr;
  Tensor grads_;
};

}  // namespace ptdp
