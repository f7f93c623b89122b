// α–β collectives and point-to-point transfers.
#include "core/sim/comm_model.h"

#include <algorithm>
#include <string>

#include "core/sim/calibration.h"

namespace ptdp {

CommModel::CommModel(const Machine& machine, const Calibration* calibration)
    : machine_(machine), calibration_(calibration) {}

double CommModel::busbw(Placement g, Collective c) const {
  if (calibration_ != nullptr)
    if (const CollectiveRate* r = calibration_->collective(c, g.single_node())) return r->busbw_gbs * 1e9;
  const Efficiency& e = machine_.efficiency;
  const double nvlink = machine_.intra_node.bandwidth_gbs * 1e9 * e.intra_node;
  if (g.single_node()) return nvlink;
  // The node's adapters are shared by the gpus_per_node/per_node groups running at once.
  const double nics = machine_.nics_per_node() * machine_.inter_node.bandwidth_gbs * 1e9 * e.inter_node;
  const double share = machine_.mechanisms.adapter_sharing ? nics * g.per_node / std::max(1, machine_.gpus_per_node) : nics;
  return g.per_node > 1 ? std::min(nvlink, share) : share;
}

double CommModel::step_latency(Placement g) const {
  return (g.single_node() ? machine_.intra_node.latency_us : machine_.inter_node.latency_us) * 1e-6;
}

// A ring collective: `steps` latencies, then the bus factor's share of the bytes at the bus bandwidth.
double CommModel::collective(double bytes, Placement g, Collective c, int steps) const {
  if (g.size <= 1 || bytes <= 0) return 0.0;
  double alpha = steps * step_latency(g);
  if (calibration_ != nullptr) {
    if (const CollectiveRate* r = calibration_->collective(c, g.single_node())) alpha = r->alpha_us * 1e-6;
  }
  return alpha + bus_factor(c, g.size) * bytes / busbw(g, c);
}

double CommModel::all_reduce(double bytes, Placement g) const {
  return collective(bytes, g, Collective::all_reduce, 2 * (g.size - 1));
}

double CommModel::all_gather(double bytes, Placement g) const {
  return collective(bytes, g, Collective::all_gather, g.size - 1);
}

double CommModel::reduce_scatter(double bytes, Placement g) const {
  return collective(bytes, g, Collective::reduce_scatter, g.size - 1);
}

double CommModel::p2p(double bytes, bool same_node, int senders_per_node) const {
  if (bytes <= 0) return 0.0;
  if (calibration_ != nullptr)
    if (const CollectiveRate* r = calibration_->collective(Collective::send_recv, same_node)) return r->alpha_us * 1e-6 + bytes / (r->busbw_gbs * 1e9);
  const Efficiency& e = machine_.efficiency;
  if (same_node) return machine_.intra_node.latency_us * 1e-6 + bytes / (machine_.intra_node.bandwidth_gbs * 1e9 * e.intra_node);
  const double nic = machine_.inter_node.bandwidth_gbs * 1e9 * e.inter_node;
  const int senders = machine_.mechanisms.adapter_sharing ? std::max(1, senders_per_node) : 1;
  const double shared = nic * machine_.nics_per_node() / senders;
  return machine_.inter_node.latency_us * 1e-6 + bytes / std::min(nic, shared);
}

Placement group_placement(const Topology& topo, const std::vector<int>& group) {
  int per_node = 0;
  for (const int r : group) per_node += topo.same_node(r, group.front()) ? 1 : 0;
  return {static_cast<int>(group.size()), per_node};
}

Placement tp_placement(int t, int gpus_per_node) {
  const Topology topo{t, 1, 1, std::max(1, gpus_per_node)};
  return group_placement(topo, topo.tp_group(0));
}

Placement dp_placement(int t, int dp, int gpus_per_node) {
  const Topology topo{t, 1, dp, std::max(1, gpus_per_node)};
  return group_placement(topo, topo.dp_group(0));
}

}  // namespace ptdp
