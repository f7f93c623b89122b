// Result files for the compare tests: a ptdp.result/2 with the figures
// `ptdp compare` reads, sweep points and sweep results around it.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gate/compare.h"

namespace ptdp::test {

using json = nlohmann::json;

// A ptdp.result/2 with the figures compare reads; tp tells configurations
// apart. Its FLOPs per iteration are what the TFLOP/s and the iteration time
// say on its t·p·d = 2·tp GPUs, so the figures agree as a run's do.
inline json result(const std::string& mode, int tp, double tflops, double iteration_s) {
  json r = {{"schema", "ptdp.result/2"},
            {"mode", mode},
            {"model", {{"layers", 2}, {"hidden", 64}}},
            {"plan", {{"tp", tp}, {"pp", 2}, {"dp", 1}, {"micro_batch", 1}, {"virtual_stages", 2},
                      {"schedule", "interleaved"}}},
            {"machine", {{"name", "a100-80gb"}}}};
  r["metrics"] = {{"model_tflops_per_gpu", tflops},
                  {"flops_per_iteration", {{"model", tflops * 1e12 * (2 * tp) * iteration_s}}},
                  {"iteration_s", {{"median", iteration_s}}},
                  {"memory_bytes", {{"peak_measured", nullptr}, {"model", {{"total", 1000.0}}}}},
                  {"bubble", {{"measured", nullptr}, {"simulated", 0.25}}}};
  return r;
}

// A sweep point record; one without a result has failed, as the runner records it.
inline json sweep_point(const std::string& label, int pp, const json& res) {
  return {{"key", label},     {"mode", res.is_null() ? json("projected") : res["mode"]},
          {"status", res.is_null() ? "failed" : "ok"},
          {"series", ""},     {"label", label},
          {"overrides", {{"plan.pp", pp}, {"plan.tp", 8}}},
          {"result", res}};
}

// What compare_entries refuses `doc` with (named `file`), or "(accepted)".
inline std::string entries_refusal(const json& doc, const std::string& file) {
  try {
    compare_entries(doc, file);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

inline json sweep(const std::vector<json>& points) {
  return {{"schema", "ptdp.sweep-results/1"}, {"sweep", {{"name", "fig"}}}, {"points", points}};
}

}  // namespace ptdp::test
