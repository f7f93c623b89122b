// The bucketed data-parallel all-reduce and the tied-embedding all-reduce.
#include "core/optim/grad_reduce.h"

#include <stdexcept>
#include <string>

#include "core/comm/tensor_collectives.h"

namespace ptdp {

BucketedGradReduce::BucketedGradReduce(Tensor grads, Communicator& dp, std::vector<GradBucket> buckets, Tensor owned)
    : grads_(std::move(grads)), owned_(std::move(owned)), dp_(dp), buckets_(std::move(buckets)) {
  std::int64_t covered = 0;
  for (const GradBucket& b : buckets_) {
    if (b.offset < 0 || b.count < 0 || b.offset + b.count > grads_.numel())
      throw std::invalid_argument("BucketedGradReduce: a bucket lies outside the gradient buffer");
    covered += b.count;
  }
  if (owned_.defined() && owned_.numel() * dp_.size() != grads_.numel())
    throw std::invalid_argument("BucketedGradReduce: the owned buffer is not 1/d of the gradient buffer");
  if (covered != grads_.numel())
    throw std::invalid_argument("BucketedGradReduce: buckets cover " + std::to_string(covered) + " of " +
                                std::to_string(grads_.numel()) + " gradient elements");
}

void BucketedGradReduce::begin_iteration() {
  if (!pending_.empty()) throw std::logic_error("BucketedGradReduce: the previous iteration was not finished");
  next_ = 0;
}

void BucketedGradReduce::launch(const GradBucket& b) {
  Tensor bucket = grads_.rows(b.offset, b.count);
  if (owned_.defined() && b.count > 0) {
    const std::int64_t dp = dp_.size();
    Tensor mine = owned_.rows(b.offset / dp, b.count / dp);
    pending_.push_back(dp_.reduce_scatter_overlapped(bucket.raw(), mine.raw(), mine.numel(), DType::f32, ReduceOp::sum));
    return;
  }
  if (dp_.size() == 1 || b.count == 0) return;
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
