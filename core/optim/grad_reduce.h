// Gradient reductions after the pipeline flush: the two copies of the tied word
// embedding (first and last stage) are summed, then every gradient is summed over
// the data-parallel group in buckets of the flat gradient buffer. The loss
// gradient already carries 1/d, so the sum is the data-parallel mean.
#pragma once
#include <cstdint>

#include "core/comm/communicator.h"
#include "core/model/param.h"

namespace ptdp {

// Default bucket: 25 M elements (100 MB in fp32), Megatron's order of magnitude.
constexpr std::int64_t kDefaultBucketElements = 25'000'000;

// Sums `grads` (1-D fp32) over `dp` in consecutive buckets; returns the buckets issued.
int reduce_data_parallel(Tensor& grads, Communicator& dp, std::int64_t bucket_elements = kDefaultBucketElements);

// Sums the word embedding gradient over the embedding group (no-op when word is null).
void reduce_tied_embedding(Param* word, Communicator& embedding_group);

}  // namespace ptdp
