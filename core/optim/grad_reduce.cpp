// The bucketed data-parallel all-reduce and the tied-embedding all-reduce.
#include "core/optim/grad_reduce.h"

#include <stdexcept>
#include <string>

#include "core/comm/tensor_collectives.h"

namespace ptdp {

BucketedGradReduce::BucketedGradReduce(Tensor grads, Communicator& dp, std::vector<GradBucket> buckets)
    : grads_(std::move(grads)), dp_(dp), buckets_(std::move(buckets)) {
  std::int64_t covered = 0;
  for (const GradBucket& b : buckets_) {
    if (b.offset < 0 || b.count < 0 || b.offset + b.count > grads_.numel())
      throw std::invalid_argument("BucketedGradReduce: a bucket lies outside the gradient buffer");
    covered += b.count;
  }
  if (covered != grads_.numel())
    throw std::invalid_argument("BucketedGradReduce: buckets cover " + std::to_string(covered) + " of " +
                                std::to_string(grads_.numel()) + " gradient elements");
}

void BucketedGradReduce::begin_iteration() {
  if (!pending_.empty()) throw std::logic_error("BucketedGradReduce: the previous iteration was not finished");
  next_ = 0;
}

void BucketedGradReduce::launch(const GradBucket& b) {
  if (dp_.size() == 1 || b.count == 0) return;
  Tensor bucket = grads_.rows(b.offset, b.count);
  pending_.push_back(dp_.all_reduce_overlapped(bucket.raw(), bucket.numel(), bucket.dtype(), ReduceOp::sum));
}

void BucketedGradReduce::visited(int visit_index) {
  for (; next_ < buckets_.size() && buckets_[next_].ready_after <= visit_index; ++next_) launch(buckets_[next_]);
}

int BucketedGradReduce::finish() {
  for (; next_ < buckets_.size(); ++next_) launch(buckets_[next_]);
  const int issued = static_cast<int>(pending_.size());
  for (auto& r : pending_) r->wait();
  pending_.clear();
  return issued;
}

void reduce_tied_embedding(Param* word, Communicator& embedding_group) {
  if (word != nullptr) all_reduce(embedding_group, word->grad);
}

}  // namespace ptdp
