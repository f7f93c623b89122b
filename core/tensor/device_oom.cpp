// The out-of-memory message of device allocators.
#include "core/tensor/device_oom.h"

#include <sstream>

namespace ptdp {

std::string device_oom_message(int rank, std::size_t request, const PoolUsage& u) {
  std::ostringstream msg;
  msg << "rank " << rank << ": out of GPU memory allocating " << request << " bytes (tensors live " << u.live
      << ", peak " << u.live_peak << "; pool reserved " << u.reserved << ", peak " << u.reserved_peak;
  if (u.device_total >= 0) msg << "; device free " << u.device_free << " of " << u.device_total;
  msg << ")";
  return msg.str();
}

}  // namespace ptdp
