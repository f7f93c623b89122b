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
  bool uneven_ends = false;    // also try, at p >= 3, the even split with one layer moved off each end stage
  bool tp_comm_overlap = false;  // also try, where sequence parallelism splits t > 1, its collectives as rings
};

struct Candidate {
  Config config;
  Projection projection;
};

// Every candidate the space allows around `base`, projected, best throughput
// first. Plans that do not fit are left out; `rejected` (if given) counts them.
std::vector<Candidate> search_plans(const Config& base, const SearchSpace& space, const Calibration* calibration,
                                    int* rejected = nullptr);

// A search and its choice: the best candidate, or (`found` false, when no plan
// fits) the plan as given, projected to show how far it is from fitting.
struct SearchOutcome {
  Candidate best;
  std::vector<Candidate> ranked;  // every candidate that fits, best first
  int rejected = 0;               // candidates that did not fit
  bool found = false;
};
SearchOutcome project_best(const Config& base, const SearchSpace& space, const Calibration* calibration);

// {"candidates", "rejected_does_not_fit", "runners_up": [{"plan", "iteration_s", "model_tflops_per_gpu"}]},
// at most `top` runners-up.
nlohmann::json search_summary(const SearchOutcome& s, int top);

}  // namespace ptdp
