// Collective bandwidths with nccl-tests' definitions: algbw = bytes/time, and
// busbw = algbw · factor, the factor making a collective's busbw comparable
// with the link's bandwidth: 2(n−1)/n for all-reduce, (n−1)/n for all-gather
// and reduce-scatter (bytes = the whole gathered buffer), 1 for broadcast and
// send/recv.
#pragma once
#include <string>

namespace ptdp {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, send_recv };

std::string collective_name(Collective c);
double bus_factor(Collective c, int ranks);
inline double algbw(double bytes, double seconds) { return bytes / seconds; }
inline double busbw(Collective c, int ranks, double bytes, double seconds) {
  return algbw(bytes, seconds) * bus_factor(c, ranks);
}

}  // namespace ptdp
