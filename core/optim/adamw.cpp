// AdamW: state allocation and the per-target update.
#include "core/optim/adamw.h"

namespace ptdp {

namespace {

std::vector<AdamWTarget> whole(const ParamList& params) {
  std::vector<AdamWTarget> out;
  for (Param* p : params) out.push_back({p->value, p->grad, p->weight_decay});
  return out;
}

}  // namespace

AdamW::AdamW(Ops& ops, std::vector<AdamWTarget> targets, const OptimizerConfig& cfg) : ops_(ops), cfg_(cfg) {
  for (AdamWTarget& t : targets) {
    const Shape shape = t.value.shape();
    State s{std::move(t), Tensor{}, ops.zeros(shape, DType::f32), ops.zeros(shape, DType::f32)};
    s.master = s.target.value;
    if (s.target.value.dtype() != DType::f32) {
      s.master = ops.empty(shape, DType::f32);
      ops.cast(s.target.value, s.master);
    }
    states_.push_back(std::move(s));
  }
}

AdamW::AdamW(Ops& ops, const ParamList& params, const OptimizerConfig& cfg) : AdamW(ops, whole(params), cfg) {}

void AdamW::step(double lr) {
  ++step_;
  AdamWParams hp;
  hp.lr = static_cast<float>(lr);
  hp.beta1 = static_cast<float>(cfg_.beta1);
  hp.beta2 = static_cast<float>(cfg_.beta2);
  hp.eps = static_cast<float>(cfg_.eps);
  hp.step = step_;
  Ops::AdamWGroup group;
  for (State& s : states_) {
    group.masters.push_back(&s.master);
    group.grads.push_back(&s.target.grad);
    group.m.push_back(&s.m);
    group.v.push_back(&s.v);
    group.weights.push_back(s.master.raw() != s.target.value.raw() ? &s.target.value : nullptr);
    group.decay.push_back(s.target.decay ? static_cast<float>(cfg_.weight_decay) : 0.0f);
  }
  ops_.adamw_multi(group, hp);
}

std::int64_t AdamW::state_bytes() const {
  std::int64_t bytes = 0;
  for (const State& s : states_) {
    bytes += static_cast<std::int64_t>(s.m.bytes() + s.v.bytes());
    if (s.master.raw() != s.target.value.raw()) bytes += static_cast<std::int64_t>(s.master.bytes());
  }
  return bytes;
}

}  // namespace ptdp
