// Tensor-level wrappers over a Communicator (element counts and types from the tensor).
#pragma once
#include "core/comm/communicator.h"
#include "core/tensor/tensor.h"

namespace ptdp {

inline void all_reduce(Communicator& comm, Tensor& x, ReduceOp op = ReduceOp::sum) {
  if (comm.size() > 1) comm.all_reduce(x.raw(), x.numel(), x.dtype(), op);
}

// full (size()·n elements) = concatenation of every rank's shard (n elements), rank order.
inline void all_gather(Communicator& comm, const Tensor& shard, Tensor& full) {
  comm.all_gather(shard.raw(), full.raw(), shard.numel(), shard.dtype());
}

}  // namespace ptdp
