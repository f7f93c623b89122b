// Writing a RunResult, and the throughput figures every result reports.
#include "core/results/result.h"

#include <algorithm>

#include "core/accounting/flops.h"
#include "core/accounting/throughput.h"
#include "core/results/result_io.h"
#include "core/schedule/registry.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

json to_json(const BubbleFigures& b) {
  return {{"measured", or_null(b.measured)},
          {"simulated", or_null(b.simulated)},
          {"analytical", b.analytical},
          {"idle_share", or_null(b.idle_share)},
          {"per_stage", {{"measured", or_null(b.measured_per_stage)}, {"simulated", or_null(b.simulated_per_stage)}}},
          {"per_rank", {{"measured", or_null(b.measured_per_rank)}}},
          {"definition", "idle/busy within the pipeline phase (first instruction to last backward over all ranks), "
                         "the paper's t_pb/t_id; idle_share = idle/phase; means over stages"}};
}

json to_json(const MemoryFigures& m) {
  json stages = json::array();
  for (const auto& s : m.model_per_stage) stages.push_back(to_json(s));
  json per_rank = {{"measured", or_null(m.measured_per_rank)}};
  for (const auto& [key, values] : m.device_per_rank) per_rank[key] = values;
  return {{"formula", to_string(m.formula)},
          {"model", m.model_per_stage.empty() ? json(nullptr) : to_json(m.model_per_stage.front())},
          {"peak_model", m.peak_model()},
          {"peak_measured", or_null(m.peak_measured)},
          {"available", m.available},
          {"fits", m.fits},
          {"per_stage", {{"model", stages}, {"measured", or_null(m.measured_per_stage)}}},
          {"per_rank", per_rank}};
}

json to_json(const Breakdown& b) {
  return {{"compute", b.compute}, {"tp_comm", b.tp_comm},     {"pp_comm", b.pp_comm},
          {"dp_comm", b.dp_comm}, {"optimizer", b.optimizer}, {"bubble", b.bubble}};
}

json to_json(const CommunicationFigures& c) {
  return {{"tp_bytes", c.tp}, {"pp_bytes", c.pp}, {"dp_bytes", c.dp}, {"embedding_bytes", c.embedding},
          {"note", "payload bytes per iteration, summed over ranks"}};
}

json metrics_json(const RunResult& r) {
  json m = throughput_metrics(r.config, r.median_iteration_s());
  m["iteration_s"] = summarize_samples(r.iteration_s);
  m["bubble"] = to_json(r.bubble);
  m["memory_bytes"] = to_json(r.memory);
  m["breakdown_s"] = r.breakdown ? to_json(*r.breakdown) : json(nullptr);
  m["communication"] = r.communication ? to_json(*r.communication) : json(nullptr);
  m["loss"] = or_null(r.loss);
  m["grad_norm"] = or_null(r.grad_norm);
  m["lr"] = or_null(r.lr);
  m["checkpoint"] = r.checkpoint ? to_json(*r.checkpoint) : json(nullptr);
  return m;
}

const char* provenance_key(ResultMode m) { return m == ResultMode::measured ? "run" : "projection"; }

// "expected_error" and "sensitivity", where the result has them.
void add_trust(const RunResult& r, json& j) {
  if (r.expected_error) j["expected_error"] = *r.expected_error;
  if (r.sensitivity) j["sensitivity"] = *r.sensitivity;
}

}  // namespace

std::int64_t MemoryFigures::peak_model() const {
  std::int64_t peak = 0;
  for (const auto& s : model_per_stage) peak = std::max(peak, s.total());
  return peak;
}

double RunResult::median_iteration_s() const { return median(iteration_s); }

Throughput RunResult::throughput() const { return ptdp::throughput(config, median_iteration_s()); }

json to_json(const RunResult& r) {
  json j = {{"schema", kResultSchema},         {"system", r.system},
            {"mode", to_string(r.mode)},       {"model", to_json(r.config.model)},
            {"plan", to_json(r.config.plan)},  {"machine", to_json(r.config.machine)},
            {"optimizer", to_json(r.config.optimizer)}, {"software", r.software}};
  if (r.vocab_padded > 0) j["model"]["vocab_padded"] = r.vocab_padded;
  j[provenance_key(r.mode)] = r.provenance;
  j["metrics"] = metrics_json(r);
  add_trust(r, j);
  if (r.mode == ResultMode::measured) {
    if (r.projected) {
      j["projected"] = {{"projection", r.projected->provenance}, {"metrics", metrics_json(*r.projected)}};
      add_trust(*r.projected, j["projected"]);
    } else {
      j["projected"] = {{"error", r.projected_error}};
    }
  }
  if (r.hardware) j["hardware"] = to_json(*r.hardware);
  if (!r.ranks.empty()) {
    j["ranks"] = to_json(r.ranks);
    const auto stragglers = straggler_summary(r.ranks);
    j["stragglers"] = stragglers ? to_json(*stragglers) : json(nullptr);
  }
  if (!r.memory.fits) j["does_not_fit"] = {{"peak_bytes", r.memory.peak_model()}, {"available_bytes", r.memory.available}};
  for (const auto& [key, value] : r.extra.items()) j[key] = value;
  return j;
}

json throughput_metrics(const Config& cfg, double iteration_s) {
  const Model& m = cfg.model;
  const Plan& p = cfg.plan;
  const Throughput t = throughput(cfg, iteration_s);
  json j;
  j["flops_per_iteration"] = {{"model", t.model_flops},
                              {"eq3", model_flops_eq3(m, p.global_batch)},
                              {"no_recompute", model_flops_no_recompute(m, p.global_batch)},
                              {"hardware", t.hardware_flops}};
  j["model_flops_convention"] = kModelFlopsConvention;
  j["model_tflops_per_gpu"] = t.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = t.hardware_tflops_per_gpu;
  j["aggregate_pflops"] = t.aggregate_pflops;
  j["tokens_per_s"] = t.tokens_per_s;
  j["sequences_per_s"] = t.sequences_per_s;
  j["peak_tflops_used"] = or_null(t.peak_tflops);
  const auto source = cfg.machine.sources.find("peak_tflops");
  j["peak_source"] = source != cfg.machine.sources.end() ? json(source->second) : json(nullptr);
  j["percent_of_peak"] = or_null(t.percent_of_peak);
  j["mfu"] = or_null(t.mfu);
  j["hfu"] = or_null(t.hfu);
  j["utilization"] = {{"peak_tflops", or_null(t.peak_tflops)},
                      {"precision", to_string(p.precision)},
                      {"mfu", "flops_per_iteration.no_recompute / (gpus * iteration_s * peak)"},
                      {"hfu", "flops_per_iteration.hardware / (gpus * iteration_s * peak)"}};
  return j;
}

json to_json(const MemoryBreakdown& m) {
  return {{"params", m.params}, {"grads", m.grads}, {"optimizer", m.optimizer},
          {"activations", m.activations}, {"total", m.total()}};
}

double analytical_bubble(const Plan& p) {
  const double m = p.micro_batches();
  if (m <= 0) return 0.0;
  const ScheduleInfo* info = find_schedule(p.schedule);
  if (info != nullptr && info->analytical_bubble != nullptr)
    return info->analytical_bubble(p.pp, p.micro_batches(), p.virtual_stages);
  return (p.pp - 1) / (p.virtual_stages * m);
}

}  // namespace ptdp
