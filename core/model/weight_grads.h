// Zero-bubble pipelines split a backward into B (input gradient) and W
// (weight gradient). B records here what each linear layer's weight-gradient
// GEMM needs, W runs them. Letters: n = b·s rows, k a layer's input width, m
// its output width.
#pragma once
#include <vector>

#include "core/kernels/ops.h"
#include "core/model/param.h"
#include "core/model/part_residency.h"

namespace ptdp {

// The weight-gradient GEMMs one B of one (micro-batch, chunk) deferred.
class DeferredWeightGrads {
 public:
  // Later: param.grad (m, k) += dyᵀ · x, dy (…, m) the output gradient and x
  // (…, k) the input of the layer's forward. Holds both until run().
  void add(const Tensor& dy, const Tensor& x, Param& param) { gemms_.push_back({dy, x, &param, part_}); }
  // The chunk part (ChunkPart numbering) whose GEMMs the following add()s record.
  void set_part(int part) { part_ = part; }
  // All of them, in the order B recorded them (so the sums match the fused
  // backward's order per parameter), then frees dy and x. With `residency`
  // (data-parallel sharding) each part's GEMMs run between its enter and leave
  // of PartPass::weight on chunk `chunk`.
  void run(Ops& ops, PartResidency* residency = nullptr, int chunk = 0);
  bool empty() const { return gemms_.empty(); }

 private:
  struct Gemm {
    Tensor dy, x;
    Param* param;
    int part;
  };
  std::vector<Gemm> gemms_;
  int part_ = 0;
};

// The dW argument of a linear layer's backward: the gradient itself when
// `later` is null (the whole backward), else an undefined tensor (no dW now)
// after recording the GEMM in `later`.
Tensor weight_grad_target(Param& param, const Tensor& dy, const Tensor& x, DeferredWeightGrads* later);

}  // namespace ptdp
