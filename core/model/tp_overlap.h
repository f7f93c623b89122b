// Tensor-parallel communication overlap (plan.tp_comm_overlap, under sequence
// parallelism), as Megatron-Core and Transformer Engine's userbuffers do it:
// the all-gather before a column-parallel GEMM and the reduce-scatter after a
// row-parallel GEMM are split into the t ranks' token blocks (n/t rows each,
// n = b·s) and passed around a ring of point-to-point transfers. Each of the t
// steps moves one block to the next rank while the GEMM works on the block in
// hand, so a step costs max(GEMM on a block, transfer of a block), not their
// sum (core/sim/layer_costs.cpp costs it from the same t blocks).
#pragma once
#include <cstdint>
#include <functional>

#include "core/model/model_context.h"

namespace ptdp {

// The GEMM on the token rows [first_row, first_row + rows) of the full (b, s, …) tensors.
using RowBlockGemm = std::function<void(std::int64_t first_row, std::int64_t rows)>;
// The same, writing the block's rows of a (b, s, m) partial product into out (rows, m).
using RowBlockGemmInto = std::function<void(std::int64_t first_row, std::int64_t rows, Tensor& out)>;

// Rows [first_row, +rows) of x (b, s, w) as a (rows, w) view; x itself when that is all of it.
Tensor token_rows(const Tensor& x, std::int64_t first_row, std::int64_t rows);

// full (b, s, k) := every rank's local (b, s/t, k) rows, in rank order; gemm runs on
// each rank's block as soon as it is in `full` (this rank's first, then one per step).
void ring_gather_tokens(ModelContext& ctx, const Tensor& local, Tensor& full, const RowBlockGemm& gemm);

// This rank's (b, s/t, m) rows of the sum over the t ranks of a (b, s, full_shape[2])
// product that gemm computes block by block: block j's partial sums travel from
// rank j+1 around the ring, each rank adding its own, and end at rank j.
Tensor ring_reduce_tokens(ModelContext& ctx, const Shape& full_shape, const RowBlockGemmInto& gemm);

}  // namespace ptdp
