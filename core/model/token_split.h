// Sequence parallelism (Korthikanti et al. 2022): outside the tensor-parallel
// GEMMs each tensor-parallel rank holds a contiguous block of the n = b·s token
// rows. A local activation is labelled (b, s/t, h) but holds flattened rows
// [r·n/t, (r+1)·n/t) of the full (b, s, h) tensor; layernorm, bias and residual
// are per token, so any token partition gives the single-rank values.
// Without sequence parallelism (or t = 1) these reduce to the f/g all-reduces.
#pragma once
#include "core/model/norm.h"
#include "core/model/model_context.h"
#include "core/model/tp_overlap.h"

namespace ptdp {

// full (b, s, h) from every rank's local (b, s/t, h) rows (the local tensor itself
// without sequence parallelism).
Tensor gather_tokens(ModelContext& ctx, const Tensor& local);

// The (b, s, k) tensor a column-parallel GEMM reads: a new one that
// gather_tokens_then fills under sequence parallelism, else `local` itself.
Tensor gathered_tokens(ModelContext& ctx, const Tensor& local);

// f before a column-parallel GEMM: fills `full` (from gathered_tokens) with every
// rank's rows and runs gemm over all of them: block by block as the ring brings
// them under tp_comm_overlap, else once after the all-gather.
void gather_tokens_then(ModelContext& ctx, const Tensor& local, Tensor& full, const RowBlockGemm& gemm);

// g after a row-parallel GEMM: the t ranks' partial (b, s, m) products that gemm
// writes, summed: reduce_tokens of one (b, s, m) product, or under tp_comm_overlap
// the ring's reduce-scatter of one product block at a time.
Tensor reduce_tokens_of(ModelContext& ctx, const Shape& full_shape, const RowBlockGemmInto& gemm);

// Sums the t ranks' partial (b, s, h): under sequence parallelism a reduce-scatter
// returning this rank's (b, s/t, h) rows, otherwise the all-reduced full tensor.
Tensor reduce_tokens(ModelContext& ctx, Tensor& partial);

// Norm backward on this rank's rows. Under sequence parallelism the gain and
// bias gradients of local rows are partial sums over tokens: all-reduced over the
// tensor-parallel group each micro-batch ((h) elements), so every rank's
// replicated copy holds the single-rank gradient.
Tensor norm_backward_tokens(ModelContext& ctx, const Tensor& dy, const Tensor& x, const NormActs& a,
                            NormParams& norm);

}  // namespace ptdp
