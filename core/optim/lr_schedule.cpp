// lr_at: the warmup, the decay styles and WSD's anneal shapes.
#include "core/optim/lr_schedule.h"

#include <cmath>
#include <numbers>

namespace ptdp {

namespace {

// The cosine's share of the way from 1 down to 0 at fraction r of the way.
double cosine(double r) { return 0.5 * (std::cos(std::numbers::pi * r) + 1.0); }

// WSD's coefficient: 1 through the stable phase, then the anneal's shape over its last A iterations.
double wsd_coefficient(const OptimizerConfig& o, std::int64_t i) {
  const std::int64_t anneal_start = o.lr_decay_iters - o.lr_wsd_decay_iters;
  if (i <= anneal_start) return 1.0;
  const double q = static_cast<double>(i - anneal_start) / o.lr_wsd_decay_iters;
  switch (o.lr_wsd_decay_style) {
    case WsdDecayStyle::exponential: return 2.0 * std::pow(0.5, q) - 1.0;
    case WsdDecayStyle::linear: return 1.0 - q;
    case WsdDecayStyle::cosine: return cosine(q);
    case WsdDecayStyle::minus_sqrt: return 1.0 - std::sqrt(q);
  }
  return 1.0;
}

}  // namespace

double lr_at(const OptimizerConfig& o, std::int64_t i) {
  const std::int64_t warmup = o.lr_warmup_iters, decay = o.lr_decay_iters;
  if (warmup > 0 && i <= warmup)
    return o.lr_warmup_init + (o.lr - o.lr_warmup_init) * static_cast<double>(i) / static_cast<double>(warmup);
  if (o.lr_decay_style == LrDecayStyle::constant) return o.lr;
  if (i > decay) return o.min_lr;
  const double r = static_cast<double>(i - warmup) / static_cast<double>(decay - warmup);
  double coeff = 1.0;
  switch (o.lr_decay_style) {
    case LrDecayStyle::constant: coeff = 1.0; break;
    case LrDecayStyle::linear: coeff = 1.0 - r; break;
    case LrDecayStyle::cosine: coeff = cosine(r); break;
    case LrDecayStyle::wsd: coeff = wsd_coefficient(o, i); break;
  }
  return o.min_lr + coeff * (o.lr - o.min_lr);
}

}  // namespace ptdp
