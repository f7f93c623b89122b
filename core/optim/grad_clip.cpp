// Global-norm computation and clipping.
#include "core/optim/grad_clip.h"

#include <cmath>

namespace ptdp {

double global_grad_norm(Ops& ops, const ParamList& params, Communicator& model_parallel) {
  double local = 0;
  for (const Param* p : params)
    if (p->count_in_norm) local += ops.sum_squares(p->grad);
  return std::sqrt(model_parallel.all_reduce_host(local, ReduceOp::sum));
}

double clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
}

}  // namespace ptdp
