// The free choices the paper leaves unstated, searched: micro-batch size,
// virtual stages (for interleaved schedules) and, when asked, the split of a
// fixed model-parallel size between tensor and pipeline parallelism. Only valid
// plans that fit in memory are ranked; the best comes first.
#pragma once
#include <vector>

#include "core/sim/projector.h"

namespace ptdp {

struct SearchSpace {
  std::vector<int> micro_batches = {1, 2, 4, 8};
  std::vector<int> virtual_stages = {2, 3, 4, 5, 6, 8};  // interleaved plans: those dividing l/p
  bool split_tp_pp = false;    // also try every (t, p) with the same t·p
};

struct Candidate {
  Config config;
  Projection projection;
};

// Every candidate the space allows around `base`, projected, best throughput
// first. Plans that do not fit are left out; `rejected` (if given) counts them.
std::vector<Candidate> search_plans(const Config& base, const SearchSpace& space, const Calibration* calibration,
                                    int* rejected = nullptr);

}  // namespace ptdp
