// Helpers shared by the files of NcclCommunicator (nccl_communicator_nccl.cpp:
// creation, collectives, waits; nccl_p2p_nccl.cpp: pipeline point-to-point).
// Internal to core/comm: not for other callers.
#pragma once
#include <nccl.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/comm/communicator.h"
#include "core/tensor/dtype.h"

namespace ptdp::nccl_detail {

// ncclUniqueId travels over the host communicator as i32 elements.
constexpr int kIdInts = static_cast<int>(sizeof(ncclUniqueId) / sizeof(std::int32_t));
static_assert(sizeof(ncclUniqueId) % sizeof(std::int32_t) == 0, "ncclUniqueId travels as i32 elements");

inline ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::bf16: return ncclBfloat16;
    case DType::f16: return ncclFloat16;
    case DType::i32: return ncclInt32;
  }
  throw std::invalid_argument("NCCL communicator: no NCCL type for " + dtype_name(t));
}

// Non-blocking: calls on the communicator return ncclInProgress instead of
// blocking; NcclCommunicator::await polls them to completion with a deadline.
inline ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

inline std::size_t nccl_count(std::int64_t count) {
  if (count < 0) throw std::invalid_argument("NCCL communicator: negative count " + std::to_string(count));
  return static_cast<std::size_t>(count);
}

inline ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::sum ? ncclSum : ncclMax; }

inline std::int64_t payload(std::int64_t count, DType type) { return count * static_cast<std::int64_t>(dtype_size(type)); }

inline std::string peer_name(int peer) { return "rank " + std::to_string(peer) + " of its group"; }

// A call on non-blocking communicators: an error throws as PTDP_NCCL_CHECK;
// ncclInProgress polls `comms` until the call was carried out (deadline).
#define PTDP_NCCL_ENQUEUE(expr, ...) enqueued((expr), __VA_ARGS__, #expr, __FILE__, __LINE__)

}  // namespace ptdp::nccl_detail
