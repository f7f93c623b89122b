// The collectives, one spelling for the communicators, the cost model, the
// calibration and the collective benchmark. Bus factor (nccl-tests): the share
// of the buffer each rank moves over its link, making a collective's bus
// bandwidth comparable with the link's: 2(n−1)/n for a ring all-reduce, (n−1)/n
// for all-gather and reduce-scatter (bytes = the whole gathered buffer), 1 for
// broadcast and send/recv.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace ptdp {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, send_recv };
inline constexpr Collective kCollectives[] = {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                                              Collective::broadcast, Collective::send_recv};

// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "send_recv": the keys of results and calibrations.
std::string collective_name(Collective c);
// The collective named `name` by collective_name, or none.
std::optional<Collective> collective_from_name(std::string_view name);
double bus_factor(Collective c, int ranks);

}  // namespace ptdp
