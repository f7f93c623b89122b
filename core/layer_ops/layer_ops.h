// A decoder layer as data: for one tensor-parallel rank's sizes (RankDims), the
// plan and a pass, the list of its op records (layer_op.h) in the order the
// layer (transformer_layer.h) calls its Ops, for the GPT and Llama blocks and
// every plan switch the layer honours (fused ops, flash or unfused attention,
// sequence parallelism, recompute) and dropout, which the projection prices
// and ptdp's own forward does not run.
//
// Priced bytes (the cost model's roofline of memory-bound work; e bytes an
// element, rows = n, or n/t under sequence parallelism):
//   norm                 reads and writes (rows, h)                     2·rows·h·e, 1 kernel
//   residual add         y + x into x2 (rows, h), fused with bias and
//                        dropout: (3e + mask)·rows·h, 1 kernel; unfused: + 2e (bias),
//                        + 2e + 1 (dropout), a kernel each
//   GeLU                 fused with its bias: 2·n·f·e, 1 kernel; unfused: 4·n·f·e, 2 (no bias: 2·n·f·e, 1)
//   SwiGLU               fused: 3·n·f·e, 1 kernel; unfused 5·n·f·e, 2, and fc1's bias
//                        on 2f/t apart, 4·n·f·e, 1 (f is f/t here)
//   RoPE                 reads and writes q and k, 2·n·(a + g)·d·e, 1 kernel (unfused 2)
//   attention            q, k, v and its output, n·d·e·(2a + 2g) (the core's own terms
//                        are priced from its sizes, core/sim/layer_costs.cpp)
// A backward record moves twice its forward's (it reads the saved input and the
// gradient and writes the gradient); summing q's and kv's input gradients is not
// priced. The element-wise gradients of biases and norms ride on these.
// Under tp_comm_overlap the layer runs each GEMM beside an all-gather or a
// reduce-scatter as t blocks of n/t rows (tp_overlap.h); its record keeps the
// whole GEMM with the collective, and the cost model prices the blocks.
#pragma once
#include <vector>

#include "core/config/model.h"
#include "core/config/plan.h"
#include "core/config/rank_dims.h"
#include "core/layer_ops/layer_op.h"

namespace ptdp {

// forward: the ops of one micro-batch's forward, with the bytes each keeps under
// p.recompute. backward: the ops of its backward as they run, those recompute
// re-runs marked Pass::recompute (full: the whole forward first; selective: the
// attention core before its backward). recompute: only those.
std::vector<LayerOp> layer_ops(const Model& m, const Plan& p, const RankDims& r, Pass pass);

}  // namespace ptdp
