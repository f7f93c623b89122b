// Time shares and the machine rate the projection is most sensitive to.
#include "core/sim/sensitivity.h"

#include <cmath>
#include <functional>

#include "core/sim/projector.h"

namespace ptdp {

namespace {

using json = nlohmann::json;

// One machine-profile rate: its field name and where it lives in a Config.
struct Rate {
  std::string name;
  std::function<double&(Config&)> field;
};

std::vector<Rate> rates(const Config& cfg) {
  const std::string precision = to_string(cfg.plan.precision);
  return {
      {"peak_tflops." + precision, [precision](Config& c) -> double& { return c.machine.peak_tflops[precision]; }},
      {"memory_bandwidth_gbs", [](Config& c) -> double& { return c.machine.memory_bandwidth_gbs; }},
      {"intra_node.bandwidth_gbs", [](Config& c) -> double& { return c.machine.intra_node.bandwidth_gbs; }},
      {"intra_node.latency_us", [](Config& c) -> double& { return c.machine.intra_node.latency_us; }},
      {"inter_node.bandwidth_gbs", [](Config& c) -> double& { return c.machine.inter_node.bandwidth_gbs; }},
      {"inter_node.latency_us", [](Config& c) -> double& { return c.machine.inter_node.latency_us; }},
      {"efficiency.gemm", [](Config& c) -> double& { return c.machine.efficiency.gemm; }},
      {"efficiency.memory", [](Config& c) -> double& { return c.machine.efficiency.memory; }},
      {"efficiency.flash_attention", [](Config& c) -> double& { return c.machine.efficiency.flash_attention; }},
      {"efficiency.kernel_launch_us", [](Config& c) -> double& { return c.machine.efficiency.kernel_launch_us; }},
      {"efficiency.intra_node", [](Config& c) -> double& { return c.machine.efficiency.intra_node; }},
      {"efficiency.inter_node", [](Config& c) -> double& { return c.machine.efficiency.inter_node; }},
  };
}

// Relative change of the iteration time with one rate scaled by `factor`.
double change(const Config& cfg, const Rate& rate, double factor, double iteration_s, const Calibration* calibration) {
  Config changed = cfg;
  rate.field(changed) *= factor;
  return project(changed, calibration).iteration_s / iteration_s - 1;
}

// Fractions of the iteration: they sum to 1 when the classes cover it all.
json shares_json(const TimeShares& s, double iteration_s) {
  const auto share = [iteration_s](double seconds) { return iteration_s > 0 ? seconds / iteration_s : 0.0; };
  return {{"gemm", share(s.gemm)},         {"attention", share(s.attention)}, {"memory_bound", share(s.memory)},
          {"tensor_parallel", share(s.tp)}, {"pipeline", share(s.pp)},        {"data_parallel", share(s.dp)},
          {"bubble", share(s.bubble)},     {"optimizer", share(s.optimizer)}};
}

}  // namespace

TimeShares time_shares(const Breakdown& b, const PassCost& passes) {
  // The simulated spans of forwards and backwards are split by their passes'
  // cost shares (projector.cpp), so passes.total() = compute + tp_comm.
  return {passes.gemm, passes.attention, passes.memory, b.tp_comm, b.pp_comm, b.dp_comm, b.bubble, b.optimizer};
}

std::vector<std::string> sensitivity_parameters(const Config& cfg) {
  std::vector<std::string> names;
  for (const auto& r : rates(cfg)) names.push_back(r.name);
  return names;
}

json sensitivity(const Config& cfg, const TimeShares& shares, double iteration_s, const Calibration* calibration) {
  json parameters = json::object();
  json most = {{"parameter", nullptr}, {"perturbation", nullptr}, {"change", 0.0}};
  if (iteration_s > 0)
    for (const auto& rate : rates(cfg)) {
      if (Config probe = cfg; rate.field(probe) == 0) continue;  // a rate the profile does not give
      const double down = change(cfg, rate, 1 - kPerturbation, iteration_s, calibration);
      const double up = change(cfg, rate, 1 + kPerturbation, iteration_s, calibration);
      parameters[rate.name] = {down, up};
      for (const auto& [sign, c] : {std::pair{-kPerturbation, down}, {kPerturbation, up}})
        if (std::abs(c) > std::abs(most["change"].get<double>())) most = {{"parameter", rate.name}, {"perturbation", sign}, {"change", c}};
    }
  return {{"shares", shares_json(shares, iteration_s)},
          {"perturbation", kPerturbation},
          {"parameters", parameters},
          {"most_sensitive", most}};
}

}  // namespace ptdp
