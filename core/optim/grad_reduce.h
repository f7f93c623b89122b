// Gradient reductions: the data-parallel sum of the flat gradient buffer in
// buckets, each launched as soon as the last backward has completed the
// gradients in it (overlapped with the rest of the backward where the
// communicator allows), and the all-reduce of the tied word embedding's two
// copies (first and last stage). The loss gradient already carries 1/d, so the
// data-parallel sum is the mean.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/comm/communicator.h"
#include "core/model/param.h"
#include "core/optim/bucket_schedule.h"

namespace ptdp {

// Default bucket: 25 M elements (100 MB in fp32), Megatron's order of magnitude.
constexpr std::int64_t kDefaultBucketElements = 25'000'000;
// Fewest buckets a rank's gradients are cut into where they allow: one bucket
// could start only after the whole backward, so there would be no overlap.
constexpr std::int64_t kMinBuckets = 4;

// The bucket size for `total` gradient elements: 25 M, or less to make kMinBuckets.
inline std::int64_t bucket_elements_for(std::int64_t total) {
  const std::int64_t quarter = total / kMinBuckets;
  return quarter < 1 ? 1 : (quarter < kDefaultBucketElements ? quarter : kDefaultBucketElements);
}

// The data-parallel all-reduce of one iteration, bucket by bucket.
class BucketedGradReduce {
 public:
  // `grads`: the flat fp32 gradient buffer; `buckets` in launch order (schedule_buckets).
  // With `owned` (the distributed optimizer's (N/d) buffer, distributed_optimizer.h)
  // each bucket (o, c) is reduce-scattered into owned[o/d, o/d + c/d) instead
  // of all-reduced (even over a group of one, where it is a copy).
  BucketedGradReduce(Tensor grads, Communicator& dp, std::vector<GradBucket> buckets, Tensor owned = Tensor{});

  // Forgets the previous iteration (its requests must have been finished).
  void begin_iteration();
  // Launches every bucket not yet launched whose ready_after ≤ visit_index.
  void visited(int visit_index);
  // Launches the rest and waits for all (on NCCL the wait orders the compute
  // stream: the host does not block). Returns the buckets issued this iteration.
  int finish();

  const std::vector<GradBucket>& buckets() const { return buckets_; }

 private:
  void launch(const GradBucket& b);
  Tensor grads_;
  Tensor owned_;  // undefined: all-reduce
  Communicator& dp_;
  std::vector<GradBucket> buckets_;
  std::size_t next_ = 0;  // first bucket not launched this iteration
  std::vector<std::unique_ptr<Request>> pending_;
};

// Sums the word embedding gradient over the embedding group (no-op when word is null).
void reduce_tied_embedding(Param* word, Communicator& embedding_group);

}  // namespace ptdp
