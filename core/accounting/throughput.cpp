// Throughput figures of an iteration time; see throughput.h.
#include "core/accounting/throughput.h"

#include "core/accounting/flops.h"

namespace ptdp {

Throughput throughput(const Config& cfg, double iteration_s) {
  const Model& m = cfg.model;
  const Plan& p = cfg.plan;
  const double batch = p.global_batch, gpus = p.world_size();
  const bool timed = iteration_s > 0;
  Throughput t;
  t.model_flops = model_flops(m, batch, p.recompute);
  t.hardware_flops = hardware_flops(m, batch, p.recompute);
  t.model_tflops_per_gpu = timed ? t.model_flops / (gpus * iteration_s) / 1e12 : 0.0;
  t.hardware_tflops_per_gpu = timed ? t.hardware_flops / (gpus * iteration_s) / 1e12 : 0.0;
  t.aggregate_pflops = t.model_tflops_per_gpu * gpus / 1e3;
  t.tokens_per_s = timed ? batch * m.seq_len / iteration_s : 0.0;
  t.sequences_per_s = timed ? batch / iteration_s : 0.0;
  const double peak = cfg.machine.peak_for(to_string(p.precision));
  if (!(peak > 0)) return t;
  t.peak_tflops = peak;
  t.percent_of_peak = 100.0 * t.model_tflops_per_gpu / peak;
  if (!timed) return t;
  const Utilization u = utilization(m, p, iteration_s, peak);
  t.mfu = u.mfu;
  t.hfu = u.hfu;
  return t;
}

}  // namespace ptdp
