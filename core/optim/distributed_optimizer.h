// The distributed optimizer (Megatron's): optimizer state sharded over the d
// data-parallel ranks. Every gradient bucket is a multiple of d elements
// (schedule_buckets' align, pack_grads' padding), and rank r owns block r of
// each: elements [o + r·c/d, o + (r+1)·c/d) of bucket (o, c). Its owned buffer,
// (N/d) fp32 for a padded gradient buffer of N, holds those blocks bucket after
// bucket, block (o, c) at o/d, so a bucket's reduce-scatter writes it directly
// (BucketedGradReduce). AdamW keeps moments (and, for 16-bit weights, fp32
// masters) for the owned pieces only; after the step the owned fp32 weights are
// all-gathered, bucket by bucket, into the spent gradient buffer and copied
// into every parameter, so each rank again holds the full weights.
#pragma once
#include <memory>
#include <vector>

#include "core/comm/communicator.h"
#include "core/optim/adamw.h"
#include "core/optim/bucket_schedule.h"

namespace ptdp {

// Elements [param_offset, param_offset + count) of `param` (flattened) are
// owned, at owned[owned_offset, owned_offset + count).
struct OwnedPiece {
  Param* param = nullptr;
  std::int64_t param_offset = 0;
  std::int64_t owned_offset = 0;
  std::int64_t count = 0;
};

// The pieces rank `r` of `d` owns, in owned-buffer order; `params` in
// gradient-buffer order, `buckets` in any order (padding belongs to no piece).
std::vector<OwnedPiece> owned_pieces(const ParamList& params, std::vector<GradBucket> buckets, int dp, int r);

class DistributedOptimizer {
 public:
  // `grads`: the padded flat fp32 gradient buffer (N) the params' grads view.
  DistributedOptimizer(Ops& ops, const ParamList& params, Tensor grads, std::vector<GradBucket> buckets,
                       Communicator& dp, const OptimizerConfig& cfg);

  Tensor owned_grads() const { return owned_; }  // (N/d) fp32
  AdamW& adamw() { return *adamw_; }
  // This rank's owned pieces; piece i is AdamW target i.
  const std::vector<OwnedPiece>& pieces() const { return pieces_; }
  const AdamW& adamw() const { return *adamw_; }
  // The global gradient norm from the owned pieces (counted ones), summed over
  // dp and then `model_parallel`.
  double grad_norm(Communicator& model_parallel);
  // The step (learning rate `lr`) on the owned pieces, then the gather's launch.
  void step(double lr);
  // Waits for the gather and copies the weights into the parameters (no-op when none is pending).
  void finish_param_gather();

 private:
  Ops& ops_;
  ParamList params_;
  Tensor grads_, owned_;
  std::vector<GradBucket> buckets_;
  Communicator& dp_;
  std::vector<OwnedPiece> pieces_;
  std::unique_ptr<AdamW> adamw_;
  std::vector<std::unique_ptr<Request>> gathers_;
};

}  // namespace ptdp
