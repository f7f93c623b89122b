// Result header and the throughput figures every result reports.
#include "core/metrics/result.h"

#include "core/metrics/flops.h"
#include "core/metrics/result_io.h"

namespace ptdp {

nlohmann::json result_header(const Config& cfg, const std::string& mode) {
  return {{"schema", kResultSchema}, {"system", "ptdp"},       {"mode", mode},
          {"model", to_json(cfg.model)}, {"plan", to_json(cfg.plan)}, {"machine", to_json(cfg.machine)},
          {"optimizer", to_json(cfg.optimizer)}, {"software", software_info()}};
}

nlohmann::json throughput_metrics(const Config& cfg, double iteration_s) {
  const Model& m = cfg.model;
  const Plan& p = cfg.plan;
  const double batch = p.global_batch, gpus = p.world_size();
  const double model = model_flops(m, batch, p.recompute), hardware = hardware_flops(m, batch, p.recompute);
  nlohmann::json j;
  j["flops_per_iteration"] = {{"model", model},
                              {"eq3", model_flops_eq3(m, batch)},
                              {"no_recompute", model_flops_no_recompute(m, batch)},
                              {"hardware", hardware}};
  const double per_gpu = iteration_s > 0 ? model / (gpus * iteration_s) / 1e12 : 0.0;
  j["model_tflops_per_gpu"] = per_gpu;
  j["hardware_tflops_per_gpu"] = iteration_s > 0 ? hardware / (gpus * iteration_s) / 1e12 : 0.0;
  j["aggregate_pflops"] = per_gpu * gpus / 1e3;
  j["tokens_per_s"] = iteration_s > 0 ? batch * m.seq_len / iteration_s : 0.0;
  j["sequences_per_s"] = iteration_s > 0 ? batch / iteration_s : 0.0;
  const double peak = cfg.machine.peak_for(to_string(p.precision));
  j["peak_tflops_used"] = peak > 0 ? nlohmann::json(peak) : nlohmann::json(nullptr);
  const auto source = cfg.machine.sources.find("peak_tflops");
  j["peak_source"] = source != cfg.machine.sources.end() ? nlohmann::json(source->second) : nlohmann::json(nullptr);
  j["percent_of_peak"] = peak > 0 ? nlohmann::json(100.0 * per_gpu / peak) : nlohmann::json(nullptr);
  const Utilization u = utilization(m, p, iteration_s, peak);
  const bool defined = peak > 0 && iteration_s > 0;
  j["mfu"] = defined ? nlohmann::json(u.mfu) : nlohmann::json(nullptr);
  j["hfu"] = defined ? nlohmann::json(u.hfu) : nlohmann::json(nullptr);
  j["utilization"] = {{"peak_tflops", peak > 0 ? nlohmann::json(peak) : nlohmann::json(nullptr)},
                      {"precision", to_string(p.precision)},
                      {"mfu", "flops_per_iteration.no_recompute / (gpus * iteration_s * peak)"},
                      {"hfu", "flops_per_iteration.hardware / (gpus * iteration_s * peak)"}};
  return j;
}

nlohmann::json to_json(const MemoryBreakdown& m) {
  return {{"params", m.params}, {"grads", m.grads}, {"optimizer", m.optimizer},
          {"activations", m.activations}, {"total", m.total()}};
}

double analytical_bubble(const Plan& p) {
  const double m = p.micro_batches();
  if (m <= 0) return 0.0;
  return (p.pp - 1) / (p.virtual_stages * m);
}

}  // namespace ptdp
