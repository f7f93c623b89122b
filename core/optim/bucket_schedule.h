// Which buckets of the flat gradient buffer can be all-reduced over the
// data-parallel group while the backward still runs, and when: a pure function
// of the parameter list (in gradient-buffer order), where each gradient is
// computed, and the order in which the last backward visits those places.
#pragma once
#include <cstdint>
#include <vector>

namespace ptdp {

// A place of the backward: part `part` (a layer, the head or the embedding; the
// numbering is the model's) of model chunk `chunk`.
struct BackwardSite {
  int chunk = 0;
  int part = 0;
  bool operator==(const BackwardSite&) const = default;
};

// One parameter of the gradient buffer, in buffer order.
struct BucketParam {
  std::int64_t numel = 0;
  std::vector<BackwardSite> sites;  // every place that adds to its gradient
  bool deferred = false;            // final only after a later step (the tied word embedding's all-reduce)
};

// Elements [offset, offset + count) of the gradient buffer.
struct GradBucket {
  std::int64_t offset = 0;
  std::int64_t count = 0;
  // Index into the visit order after which every gradient in it is final;
  // the visit order's length when it waits for the end (deferred parameters).
  int ready_after = 0;
};

// Consecutive parameters, whole (a parameter is never split), grouped until a
// bucket holds at least `bucket_elements` (the last one may hold fewer). A
// parameter is final after the last of its sites in `visit` (the order in which
// the last micro-batch's backward completes each site). Returned in launch
// order: by ready_after, then from the end of the buffer to its start (the
// order the backward produces them). Throws std::invalid_argument when a site is
// not visited, a parameter has no site, or bucket_elements or align < 1.
// With align > 1 (the distributed optimizer: align = d, so every bucket
// reduce-scatters in d equal blocks) each boundary is rounded up to a multiple
// of align, the last one past the buffer's end into its padding (pack_grads).
std::vector<GradBucket> schedule_buckets(const std::vector<BucketParam>& params,
                                         const std::vector<BackwardSite>& visit, std::int64_t bucket_elements,
                                         std::int64_t align = 1);

}  // namespace ptdp
