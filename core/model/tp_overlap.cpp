// The rings of tensor-parallel communication overlap; see tp_overlap.h.
#include "core/model/tp_overlap.h"

#include <memory>
#include <vector>

namespace ptdp {

namespace {

constexpr int kGatherTag = 11, kReduceTag = 12;  // tensor-parallel group tags (nothing else sends there)

int ring(int i, int t) { return ((i % t) + t) % t; }

}  // namespace

Tensor token_rows(const Tensor& x, std::int64_t first_row, std::int64_t rows) {
  const Tensor flat = x.view({x.numel() / x.dim(-1), x.dim(-1)});
  if (first_row == 0 && rows == flat.dim(0)) return x;  // all of it, in its own shape
  return flat.rows(first_row, rows);
}

void ring_gather_tokens(ModelContext& ctx, const Tensor& local, Tensor& full, const RowBlockGemm& gemm) {
  Communicator& tp = ctx.tp;
  const int t = tp.size(), r = tp.rank();
  const std::int64_t block = local.numel() / local.dim(-1);
  const auto block_of = [&](int j) { return token_rows(full, j * block, block); };
  Tensor mine = block_of(r);
  ctx.ops.copy(local, mine);
  // Kept to the end: each finished, or (NCCL) ordered before the compute stream, when destroyed.
  std::vector<std::unique_ptr<Request>> sends;
  for (int k = 0; k < t; ++k) {
    const int held = ring(r - k, t);  // in hand at step k: rank r−k's block
    std::unique_ptr<Request> recv;
    if (k + 1 < t) {  // pass it on, and take rank r−k−1's from the previous rank
      const Tensor out = block_of(held), in = block_of(ring(held - 1, t));
      sends.push_back(tp.isend(out.raw(), out.numel(), out.dtype(), ring(r + 1, t), kGatherTag));
      recv = tp.irecv(in.raw(), in.numel(), in.dtype(), ring(r - 1, t), kGatherTag);
    }
    gemm(held * block, block);
    if (recv) recv->order_before_use();
  }
}

Tensor ring_reduce_tokens(ModelContext& ctx, const Shape& full_shape, const RowBlockGemmInto& gemm) {
  Communicator& tp = ctx.tp;
  Ops& ops = ctx.ops;
  const int t = tp.size(), r = tp.rank();
  const std::int64_t width = full_shape.back(), block = shape_numel(full_shape) / width / t;
  std::vector<Tensor> sent;  // partial sums in flight: freed only after their sends (declared first, freed last)
  std::vector<std::unique_ptr<Request>> sends;
  Tensor sum, arriving, incoming;
  std::unique_ptr<Request> arrival;
  for (int k = 0; k < t; ++k) {
    const int j = ring(r - 1 - k, t);  // the block whose sum this step extends; j = r at the last step
    std::unique_ptr<Request> next_arrival;
    if (k + 1 < t) {  // the previous rank's sum of block j−1, for the next step
      incoming = ops.empty({block, width});
      next_arrival = tp.irecv(incoming.raw(), incoming.numel(), incoming.dtype(), ring(r - 1, t), kReduceTag);
    }
    sum = ops.empty({block, width});
    gemm(j * block, block, sum);  // this rank's partial product of block j
    if (arrival) {
      arrival->order_before_use();
      ops.add(sum, arriving, sum);
    }
    arrival = std::move(next_arrival);
    arriving = incoming;
    if (k + 1 < t) {
      sends.push_back(tp.isend(sum.raw(), sum.numel(), sum.dtype(), ring(r + 1, t), kReduceTag));
      sent.push_back(sum);
    }
  }
  sends.clear();
  Shape local = full_shape;
  local[1] /= t;  // (b, s, m) -> (b, s/t, m)
  return sum.view(local);
}

}  // namespace ptdp
