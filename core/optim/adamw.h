// AdamW over a rank's parameters with fp32 state: moments m and v, and an
// fp32 master copy when the weights are held in 16 bits (mixed precision).
#pragma once
#include <vector>

#include "core/config/config.h"
#include "core/model/param.h"

namespace ptdp {

// One tensor the optimizer updates: a whole parameter, or (distributed
// optimizer) the 1-D piece (n) of one that this data-parallel rank owns.
struct AdamWTarget {
  Tensor value;  // the weights, compute dtype
  Tensor grad;   // fp32, same element count
  bool decay = false;
};

class AdamW {
 public:
  AdamW(Ops& ops, std::vector<AdamWTarget> targets, const OptimizerConfig& cfg);
  // Every parameter whole, with its gradient.
  AdamW(Ops& ops, const ParamList& params, const OptimizerConfig& cfg);

  // One update with learning rate `lr` (lr_at, core/optim/lr_schedule.h) from
  // the (reduced, clipped) gradients; copies masters to weights.
  void step(double lr);
  int steps_taken() const { return step_; }
  // Bytes of optimizer state on this rank (moments and masters).
  std::int64_t state_bytes() const;
  // The fp32 weights of target i after the last step (the value itself when fp32).
  const Tensor& master(std::size_t i) const { return states_[i].master; }
  // Target i's state, as views (a checkpoint reads and restores them).
  struct StateTensors {
    Tensor master, m, v;  // fp32, the target's element count each
  };
  std::size_t size() const { return states_.size(); }
  StateTensors state(std::size_t i) const { return {states_[i].master, states_[i].m, states_[i].v}; }
  // A restored checkpoint's step count (bias correction continues from it).
  void set_steps_taken(int steps) { step_ = steps; }

 private:
  struct State {
    AdamWTarget target;
    Tensor master;  // fp32 weights (the target's value itself when it is fp32)
    Tensor m, v;    // fp32 moments
  };
  Ops& ops_;
  OptimizerConfig cfg_;
  std::vector<State> states_;
  int step_ = 0;
};

}  // namespace ptdp
