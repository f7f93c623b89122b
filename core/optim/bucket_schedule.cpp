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
                                         const std::vector<BackwardSite>& visit, std::int64_t bucket_elements,
                                         std::int64_t align) {
  if (bucket_elements < 1)
    throw std::invalid_argument("schedule_buckets: bucket size must be positive, got " + std::to_string(bucket_elements));
  if (align < 1) throw std::invalid_argument("schedule_buckets: alignment must be positive, got " + std::to_string(align));
  // Whole-parameter boundaries, each rounded up to a multiple of `align`: a
  // parameter cut by a rounded boundary makes both its buckets wait for it.
  std::vector<GradBucket> buckets;
  GradBucket open{0, 0, -1};
  std::int64_t end = 0;  // end of parameter i in the buffer
  for (std::size_t i = 0; i < params.size(); ++i) {
    const int ready = ready_step(params[i], i, visit);
    const std::int64_t first = end;
    end += params[i].numel;
    if (first < open.offset) buckets.back().ready_after = std::max(buckets.back().ready_after, ready);
    if (end > open.offset) open.ready_after = std::max(open.ready_after, ready);
    open.count = end - open.offset;
    if (open.count >= bucket_elements || (i + 1 == params.size() && open.count > 0)) {
      open.count = (end + align - 1) / align * align - open.offset;
      buckets.push_back(open);
      open = {open.offset + open.count, 0, -1};
    }
  }
  std::stable_sort(buckets.begin(), buckets.end(), [](const GradBucket& a, const GradBucket& b) {
    return a.ready_after != b.ready_after ? a.ready_after < b.ready_after : a.offset > b.offset;
  });
  return buckets;
}

}  // namespace ptdp
