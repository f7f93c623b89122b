// Checkpoint save and load times from the machine's filesystem; see checkpoint_cost.h.
#include "core/sim/checkpoint_cost.h"

#include <algorithm>
#include <vector>

#include "core/topology/topology.h"

namespace ptdp {

namespace {

// Bytes each node moves, when rank (k, r) moves bytes_of(r, k) (every tensor-parallel rank alike).
template <typename BytesOf>
std::vector<double> bytes_per_node(const Config& cfg, const BytesOf& bytes_of) {
  const Plan& p = cfg.plan;
  const Topology topo{p.tp, p.pp, p.dp, cfg.machine.gpus_per_node};
  std::vector<double> nodes(static_cast<std::size_t>(topo.node_of(topo.world() - 1) + 1), 0.0);
  for (int rank = 0; rank < topo.world(); ++rank) {
    const Coord c = topo.coord(rank);
    nodes[static_cast<std::size_t>(topo.node_of(rank))] += static_cast<double>(bytes_of(c.pp, c.dp));
  }
  return nodes;
}

// The larger of the two limits' times (checkpoint_cost.h); `nic_gbs` 0: no per-node limit.
CheckpointTransfer transfer(const std::vector<double>& nodes, double fs_gbs, double nic_gbs, double efficiency) {
  CheckpointTransfer t;
  for (const double b : nodes) {
    t.bytes += b;
    t.node_bytes_max = std::max(t.node_bytes_max, b);
    t.nodes += b > 0 ? 1 : 0;
  }
  const double fs_s = t.bytes / (fs_gbs * efficiency * 1e9);
  const double node_s = nic_gbs > 0 ? t.node_bytes_max / (nic_gbs * efficiency * 1e9) : 0.0;
  t.seconds = std::max(fs_s, node_s);
  t.bound = node_s > fs_s ? "node" : "filesystem";
  return t;
}

nlohmann::json transfer_json(const CheckpointTransfer& t) {
  return {{"bytes", t.bytes}, {"node_bytes_max", t.node_bytes_max}, {"nodes", t.nodes}, {"bound", t.bound}};
}

}  // namespace

CheckpointCost checkpoint_cost(const Config& cfg) {
  CheckpointCost c;
  c.size = checkpoint_size(cfg);
  if (!cfg.machine.filesystem) return c;
  const Filesystem& fs = *cfg.machine.filesystem;
  const CheckpointSize& size = c.size;
  c.save = transfer(bytes_per_node(cfg, [&](int r, int k) { return size.saved_by(r, k); }), fs.write_gbs,
                    fs.nic_gbs_per_node, fs.write_efficiency);
  c.load = transfer(bytes_per_node(cfg, [&](int r, int k) { return size.loaded_by(r, k); }), fs.read_gbs,
                    fs.nic_gbs_per_node, fs.read_efficiency);
  return c;
}

CheckpointMetrics projected_checkpoint(const Config& cfg) {
  const CheckpointCost c = checkpoint_cost(cfg);
  CheckpointMetrics m;
  m.bytes_total = c.size.bytes_total;
  m.bytes_per_rank_max = c.size.bytes_per_rank_max;
  m.filesystem = nullptr;
  if (!c.save || !c.load) return m;
  m.save_s = c.save->seconds, m.save_gbs = c.save->gbs();
  m.load_s = c.load->seconds, m.load_gbs = c.load->gbs();
  m.filesystem = {{"profile", cfg.machine.name},
                  {"figures", to_json(cfg.machine.filesystem)},
                  {"save", transfer_json(*c.save)},
                  {"load", transfer_json(*c.load)}};
  return m;
}

}  // namespace ptdp
