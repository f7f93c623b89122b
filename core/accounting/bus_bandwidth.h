// Collective bandwidths with nccl-tests' definitions: algbw = bytes/time, and
// busbw = algbw · bus_factor (core/topology/collective.h).
#pragma once
#include "core/topology/collective.h"

namespace ptdp {

inline double algbw(double bytes, double seconds) { return bytes / seconds; }
inline double busbw(Collective c, int ranks, double bytes, double seconds) {
  return algbw(bytes, seconds) * bus_factor(c, ranks);
}

}  // namespace ptdp
