// Parameter and FLOP counts.
#include "core/metrics/flops.h"

namespace ptdp {

namespace {
double d(int x) { return static_cast<double>(x); }
}  // namespace

double parameters_eq2(const Model& m) {
  const double h = d(m.hidden), f = d(m.ffn());
  const double per_layer = 4 * h * h + 2 * h * f + f + 9 * h;
  return d(m.layers) * per_layer + (d(m.vocab) + d(m.seq_len)) * h;
}

std::int64_t parameter_count(const Model& m) {
  return static_cast<std::int64_t>(parameters_eq2(m)) + 2 * static_cast<std::int64_t>(m.hidden);
}

double layer_forward_flops(const Model& m, double batch) {
  const double s = d(m.seq_len), h = d(m.hidden), f = d(m.ffn());
  return 2 * batch * s * (4 * h * h + 2 * h * f) + 4 * batch * s * s * h;
}

double logit_flops(const Model& m, double batch) {
  return 6 * batch * d(m.seq_len) * d(m.hidden) * d(m.vocab);
}

double model_flops_eq3(const Model& m, double batch) {
  return 4 * d(m.layers) * layer_forward_flops(m, batch) + logit_flops(m, batch);
}

double model_flops_no_recompute(const Model& m, double batch) {
  return 3 * d(m.layers) * layer_forward_flops(m, batch) + logit_flops(m, batch);
}

double model_flops(const Model& m, double batch, Recompute r) {
  return r == Recompute::full ? model_flops_eq3(m, batch) : model_flops_no_recompute(m, batch);
}

double hardware_flops(const Model& m, double batch, Recompute r) {
  const double base = model_flops_no_recompute(m, batch);
  const double s = d(m.seq_len), h = d(m.hidden);
  switch (r) {
    case Recompute::none: return base;
    case Recompute::selective: return base + d(m.layers) * 4 * batch * s * s * h;
    case Recompute::full: return base + d(m.layers) * layer_forward_flops(m, batch);
  }
  return base;
}

Utilization utilization(const Model& m, const Plan& p, double iteration_s, double peak_tflops) {
  const double gpus = p.world_size();
  if (!(iteration_s > 0) || !(peak_tflops > 0) || !(gpus > 0)) return {};
  const double peak_per_iteration = gpus * iteration_s * peak_tflops * 1e12;  // FLOPs the GPUs could do
  return {model_flops_no_recompute(m, p.global_batch) / peak_per_iteration,
          hardware_flops(m, p.global_batch, p.recompute) / peak_per_iteration};
}

}  // namespace ptdp
