// Global-norm computation and clipping.
#include "core/optim/grad_clip.h"

#include <cmath>

namespace ptdp {

// One read-back for the rank's gradients, one host all-reduce per group
// (skipped on a group of one, where it would only add a device round trip).
double global_norm(Ops& ops, const std::vector<const Tensor*>& counted, const std::vector<Communicator*>& groups) {
  double sum = ops.sum_squares_multi(counted);
  for (Communicator* g : groups)
    if (g->size() > 1) sum = g->all_reduce_host(sum, ReduceOp::sum);
  return std::sqrt(sum);
}

double global_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel) {
  std::vector<const Tensor*> counted;
  for (const Param* p : params)
    if (p->count_in_norm) counted.push_back(&p->grad);
  return global_norm(ops, counted, {&model_parallel});
}

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

}  // namespace ptdp
