// Names and bus-bandwidth factors of the collectives.
#include "core/topology/collective.h"

namespace ptdp {

std::string collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::broadcast: return "broadcast";
    case Collective::send_recv: return "send_recv";
  }
  return "?";
}

std::optional<Collective> collective_from_name(std::string_view name) {
  for (const Collective c : kCollectives)
    if (collective_name(c) == name) return c;
  return std::nullopt;
}

double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::all_gather: case Collective::reduce_scatter: return (n - 1) / n;
    case Collective::broadcast: case Collective::send_recv: return 1;
  }
  return 1;
}

}  // namespace ptdp
