// Per-rank dimensions (see rank_dims.h).
#include "core/config/rank_dims.h"

namespace ptdp {

int element_bytes(Precision precision) { return precision == Precision::fp32 ? 4 : 2; }
int grad_element_bytes(const Plan& plan) {
  return plan.grad_precision == GradPrecision::fp32 ? 4 : element_bytes(plan.precision);
}

RankDims::RankDims(const Model& m, const Plan& p)
    : b(p.micro_batch),
      s(m.seq_len),
      n(static_cast<std::int64_t>(p.micro_batch) * m.seq_len),
      nr(p.sequence_parallel && p.tp > 0 ? n / p.tp : n),
      h(m.hidden),
      f(m.ffn() / p.tp),
      a(m.heads / p.tp),
      g(p.tp <= m.kv() ? m.kv() / p.tp : 1),
      kv_copies(p.tp > m.kv() && m.kv() > 0 ? p.tp / m.kv() : 1),
      head_dim(m.head_dim()),
      vt(m.padded_vocab() / p.tp),
      t(p.tp),
      e(element_bytes(p.precision)) {}

}  // namespace ptdp
