// α–β collectives and point-to-point transfers.
#include "core/sim/comm_model.h"

#include <algorithm>
#include <string>

#include "core/sim/calibration.h"

namespace ptdp {

CommModel::CommModel(const Machine& machine, const Calibration* calibration)
    : machine_(machine), calibration_(calibration) {}

double CommModel::busbw(Placement g, const char* op) const {
  const std::string key = std::string(g.single_node() ? "intra_node." : "inter_node.") + op;
  if (calibration_ != nullptr)
    if (const CollectiveRate* r = calibration_->collective(key)) return r->busbw_gbs * 1e9;
  const Efficiency& e = machine_.efficiency;
  const double nvlink = machine_.intra_node.bandwidth_gbs * 1e9 * e.intra_node;
  if (g.single_node()) return nvlink;
  // The node's adapters are shared by the gpus_per_node/per_node groups running at once.
  const double nics = machine_.nics_per_node() * machine_.inter_node.bandwidth_gbs * 1e9 * e.inter_node;
  const double share = nics * g.per_node / std::max(1, machine_.gpus_per_node);
  return g.per_node > 1 ? std::min(nvlink, share) : share;
}

double CommModel::step_latency(Placement g) const {
  return (g.single_node() ? machine_.intra_node.latency_us : machine_.inter_node.latency_us) * 1e-6;
}

double CommModel::collective(double bytes, Placement g, const char* op, double factor, int steps) const {
  if (g.size <= 1 || bytes <= 0) return 0.0;
  double alpha = steps * step_latency(g);
  if (calibration_ != nullptr) {
    const std::string key = std::string(g.single_node() ? "intra_node." : "inter_node.") + op;
    if (const CollectiveRate* r = calibration_->collective(key)) alpha = r->alpha_us * 1e-6;
  }
  return alpha + factor * bytes / busbw(g, op);
}

double CommModel::all_reduce(double bytes, Placement g) const {
  const double n = g.size;
  return collective(bytes, g, "all_reduce", 2 * (n - 1) / n, 2 * (g.size - 1));
}

double CommModel::all_gather(double bytes, Placement g) const {
  const double n = g.size;
  return collective(bytes, g, "all_gather", (n - 1) / n, g.size - 1);
}

double CommModel::reduce_scatter(double bytes, Placement g) const {
  const double n = g.size;
  return collective(bytes, g, "reduce_scatter", (n - 1) / n, g.size - 1);
}

double CommModel::p2p(double bytes, bool same_node, int senders_per_node) const {
  if (bytes <= 0) return 0.0;
  const std::string key = same_node ? "intra_node.send_recv" : "inter_node.send_recv";
  if (calibration_ != nullptr)
    if (const CollectiveRate* r = calibration_->collective(key)) return r->alpha_us * 1e-6 + bytes / (r->busbw_gbs * 1e9);
  const Efficiency& e = machine_.efficiency;
  if (same_node) return machine_.intra_node.latency_us * 1e-6 + bytes / (machine_.intra_node.bandwidth_gbs * 1e9 * e.intra_node);
  const double nic = machine_.inter_node.bandwidth_gbs * 1e9 * e.inter_node;
  const double shared = nic * machine_.nics_per_node() / std::max(1, senders_per_node);
  return machine_.inter_node.latency_us * 1e-6 + bytes / std::min(nic, shared);
}

Placement tp_placement(int t, int gpus_per_node) { return {t, std::min(t, gpus_per_node)}; }

Placement dp_placement(int t, int d, int gpus_per_node) {
  // Members of a data-parallel group are t ranks apart.
  const int per_node = t >= gpus_per_node ? 1 : std::max(1, std::min(d, gpus_per_node / t));
  return {d, per_node};
}

}  // namespace ptdp
