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
// Under ZeRO-2/3 (the layout constructor) there is no gradient buffer: the
// owned blocks are those of ShardLayout's units, filled by ShardedParts
// (sharded_parts.h), which also brings the weights back after the step.
#pragma once
#include <memory>
#include <vector>

#include "core/comm/communicator.h"
#include "core/optim/adamw.h"
#include "core/optim/bucket_schedule.h"
#include "core/optim/shard_layout.h"

namespace ptdp {

class DistributedOptimizer {
 public:
  // `grads`: the padded flat fp32 gradient buffer (N) the params' grads view.
  DistributedOptimizer(Ops& ops, const ParamList& params, Tensor grads, std::vector<GradBucket> buckets,
                       Communicator& dp, const OptimizerConfig& cfg);
  // ZeRO-2/3: `owned` (N/d) fp32 the owned gradients of `layout`'s units; with
  // `owned_weights` defined (ZeRO-3: (N/d), compute dtype) AdamW updates those
  // in place of the parameters, else the parameters' owned elements.
  DistributedOptimizer(Ops& ops, const ShardLayout& layout, Tensor owned, Tensor owned_weights, Communicator& dp,
                       const OptimizerConfig& cfg);

  Tensor owned_grads() const { return owned_; }  // (N/d) fp32
  AdamW& adamw() { return *adamw_; }
  // This rank's owned pieces; piece i is AdamW target i.
  const std::vector<OwnedPiece>& pieces() const { return pieces_; }
  const AdamW& adamw() const { return *adamw_; }
  // The global gradient norm from the owned pieces (counted ones), summed over
  // dp and then `model_parallel`.
  double grad_norm(Communicator& model_parallel);
  // The step (learning rate `lr`) on the owned pieces, the updated fp32 weights
  // into owned_grads(), then (with a gradient buffer) the gather's launch.
  void step(double lr);
  // Waits for the gather and copies the weights into the parameters (no-op when none is pending).
  void finish_param_gather();

 private:
  Ops& ops_;
  ParamList params_;
  Tensor grads_, owned_;  // grads_ undefined under ZeRO-2/3
  std::vector<GradBucket> buckets_;  // empty under ZeRO-2/3
  Communicator& dp_;
  std::vector<OwnedPiece> pieces_;
  std::unique_ptr<AdamW> adamw_;
  void make_adamw(const Tensor& owned_weights, const OptimizerConfig& cfg);
  std::vector<std::unique_ptr<Request>> gathers_;
};

}  // namespace ptdp
