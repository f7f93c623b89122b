// Bucketed data-parallel all-reduce and the tied-embedding all-reduce.
#include "core/optim/grad_reduce.h"

#include <algorithm>

#include "core/comm/tensor_collectives.h"

namespace ptdp {

int reduce_data_parallel(Tensor& grads, Communicator& dp, std::int64_t bucket_elements) {
  if (dp.size() == 1) return 0;
  int buckets = 0;
  for (std::int64_t start = 0; start < grads.numel(); start += bucket_elements) {
    Tensor bucket = grads.rows(start, std::min(bucket_elements, grads.numel() - start));
    all_reduce(dp, bucket);
    ++buckets;
  }
  return buckets;
}

void reduce_tied_embedding(Param* word, Communicator& embedding_group) {
  if (word != nullptr) all_reduce(embedding_group, word->grad);
}

}  // namespace ptdp
