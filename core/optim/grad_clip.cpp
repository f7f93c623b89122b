// Global-norm computation and clipping.
#include "core/optim/grad_clip.h"

#include <cmath>
#include <vector>

namespace ptdp {

// One read-back for the rank's gradients, one host all-reduce over the group
// (skipped on a group of one, where it would only add a device round trip).
double global_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel) {
  std::vector<const Tensor*> counted;
  for (const Param* p : params)
    if (p->count_in_norm) counted.push_back(&p->grad);
  const double local = ops.sum_squares_multi(counted);
  return std::sqrt(model_parallel.size() > 1 ? model_parallel.all_reduce_host(local, ReduceOp::sum) : local);
}

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

}  // namespace ptdp
