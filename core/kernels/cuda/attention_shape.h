// The dimensions of the grouped-query attention operands of Ops (ops.h), read
// from the tensors and checked: q (b, s, a, d), kv (b, s, g, 2, d) with g
// dividing a. Shared by CudaOps's attention and RoPE.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/tensor/tensor.h"

namespace ptdp::cuda {

struct AttentionShape {
  std::int64_t b = 0, s = 0, a = 0, g = 0, head_dim = 0;
  std::int64_t group() const { return a / g; }  // query heads reading one kv head
};

// Throws std::invalid_argument naming `op` when q or kv is not laid out as above.
inline AttentionShape attention_shape(const Tensor& q, const Tensor& kv, const char* op) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string("cuda ") + op + ": " + what);
  };
  if (q.rank() != 4 || kv.rank() != 5) fail("q must be (b, s, a, d) and kv (b, s, g, 2, d)");
  const AttentionShape x{q.dim(0), q.dim(1), q.dim(2), kv.dim(2), q.dim(3)};
  if (kv.dim(0) != x.b || kv.dim(1) != x.s || kv.dim(3) != 2 || kv.dim(4) != x.head_dim)
    fail("kv is not (b, s, g, 2, d) for q (b, s, a, d)");
  if (x.g < 1 || x.a % x.g != 0) fail("the kv heads (" + std::to_string(x.g) + ") do not divide the query heads (" +
                                      std::to_string(x.a) + ")");
  if (q.dtype() != kv.dtype()) fail("q and kv differ in type");
  return x;
}

}  // namespace ptdp::cuda
