// AdamW: state allocation and the per-parameter update.
#include "core/optim/adamw.h"

namespace ptdp {

AdamW::AdamW(Ops& ops, const ParamList& params, const OptimizerConfig& cfg) : ops_(ops), cfg_(cfg) {
  for (Param* p : params) {
    State s{p, p->value, ops.zeros(p->value.shape(), DType::f32), ops.zeros(p->value.shape(), DType::f32)};
    if (p->value.dtype() != DType::f32) {
      s.master = ops.empty(p->value.shape(), DType::f32);
      ops.cast(p->value, s.master);
    }
    states_.push_back(std::move(s));
  }
}

void AdamW::step() {
  ++step_;
  AdamWParams hp;
  hp.lr = static_cast<float>(cfg_.lr);
  hp.beta1 = static_cast<float>(cfg_.beta1);
  hp.beta2 = static_cast<float>(cfg_.beta2);
  hp.eps = static_cast<float>(cfg_.eps);
  hp.step = step_;
  Ops::AdamWGroup group;
  for (State& s : states_) {
    group.masters.push_back(&s.master);
    group.grads.push_back(&s.param->grad);
    group.m.push_back(&s.m);
    group.v.push_back(&s.v);
    group.weights.push_back(s.master.raw() != s.param->value.raw() ? &s.param->value : nullptr);
    group.decay.push_back(s.param->weight_decay ? static_cast<float>(cfg_.weight_decay) : 0.0f);
  }
  ops_.adamw_multi(group, hp);
}

std::int64_t AdamW::state_bytes() const {
  std::int64_t bytes = 0;
  for (const State& s : states_) {
    bytes += static_cast<std::int64_t>(s.m.bytes() + s.v.bytes());
    if (s.master.raw() != s.param->value.raw()) bytes += static_cast<std::int64_t>(s.master.bytes());
  }
  return bytes;
}

}  // namespace ptdp
