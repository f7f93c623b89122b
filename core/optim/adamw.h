// AdamW over a rank's parameters with fp32 state: moments m and v, and an
// fp32 master copy when the weights are held in 16 bits (mixed precision).
#pragma once
#include <vector>

#include "core/config/config.h"
#include "core/model/param.h"

namespace ptdp {

class AdamW {
 public:
  AdamW(Ops& ops, const ParamList& params, const OptimizerConfig& cfg);

  // One update from the (reduced, clipped) gradients; copies masters to weights.
  void step();
  int steps_taken() const { return step_; }
  // Bytes of optimizer state on this rank (moments and masters).
  std::int64_t state_bytes() const;

 private:
  struct State {
    Param* param;
    Tensor master;  // fp32 weights (the parameter itself when it is fp32)
    Tensor m, v;    // fp32 moments
  };
  Ops& ops_;
  OptimizerConfig cfg_;
  std::vector<State> states_;
  int step_ = 0;
};

}  // namespace ptdp
