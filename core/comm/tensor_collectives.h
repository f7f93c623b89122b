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

// shard (n elements) = this rank's block of the sum over ranks of full (size()·n elements).
inline void reduce_scatter(Communicator& comm, const Tensor& full, Tensor& shard, ReduceOp op = ReduceOp::sum) {
  comm.reduce_scatter(full.raw(), shard.raw(), shard.numel(), shard.dtype(), op);
}

}  // namespace ptdp
