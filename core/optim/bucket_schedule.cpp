// Bucket boundaries and readiness of the overlapped data-parallel reduction.
#include "core/optim/bucket_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ptdp {

namespace {

// The visit index after which parameter `i`'s gradient is final.
int ready_step(const BucketParam& p, std::size_t i, const std::vector<BackwardSite>& visit) {
  const int end = static_cast<int>(visit.size());
  if (p.sites.empty()) throw std::invalid_argument("schedule_buckets: parameter " + std::to_string(i) + " has no site");
  int ready = -1;
  for (const BackwardSite& s : p.sites) {
    const auto it = std::find(visit.begin(), visit.end(), s);
    if (it == visit.end())
      throw std::invalid_argument("schedule_buckets: parameter " + std::to_string(i) + " is computed at chunk " +
                                  std::to_string(s.chunk) + " part " + std::to_string(s.part) +
                                  ", which the backward never visits");
    ready = std::max(ready, static_cast<int>(it - visit.begin()));
  }
  return p.deferred ? end : ready;
}

}  // namespace

std::vector<GradBucket> schedule_buckets(const std::vector<BucketParam>& params,
                                         const std::vector<BackwardSite>& visit, std::int64_t bucket_elements) {
  if (bucket_elements < 1)
    throw std::invalid_argument("schedule_buckets: bucket size must be positive, got " + std::to_string(bucket_elements));
  std::vector<GradBucket> buckets;
  GradBucket open{0, 0, -1};
  for (std::size_t i = 0; i < params.size(); ++i) {
    open.count += params[i].numel;
    open.ready_after = std::max(open.ready_after, ready_step(params[i], i, visit));
    if (open.count >= bucket_elements) {
      buckets.push_back(open);
      open = {open.offset + open.count, 0, -1};
    }
  }
  if (open.count > 0) buckets.push_back(open);
  std::stable_sort(buckets.begin(), buckets.end(), [](const GradBucket& a, const GradBucket& b) {
    return a.ready_after != b.ready_after ? a.ready_after < b.ready_after : a.offset > b.offset;
  });
  return buckets;
}

}  // namespace ptdp
