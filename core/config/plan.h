// The parallel plan: how a model is split over GPUs and how an iteration runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/bounds.h"

namespace ptdp {

enum class Recompute { none, selective, full };
enum class Precision { fp32, bf16, fp16 };
enum class Attention { unfused, flash };

struct Plan {
  int tp = 1;              // t: tensor-parallel size (splits heads, MLP and vocabulary)
  int pp = 1;              // p: pipeline-parallel size (splits layers into stages)
  int dp = 1;              // d: data-parallel size (replicas over the batch)
  int virtual_stages = 1;  // v: model chunks per pipeline rank (interleaved schedule)
  // Decoder layers of each virtual stage, in virtual-stage order (p·v entries summing to
  // model.layers); empty: l/(p·v) each. Lets the end stages carry fewer layers to balance
  // the embedding and the output head (core/model/chunk_layout.h reads it).
  std::vector<int> layers_per_stage;
  int micro_batch = 1;     // b: sequences per micro-batch
  int global_batch = 1;    // B: sequences per iteration, over all replicas
  std::string schedule = "1f1b";           // pipeline schedule: gpipe | 1f1b | interleaved
  Recompute recompute = Recompute::none;   // activation recomputation in backward
  bool sequence_parallel = false;          // split layernorm/dropout over t along s
  bool scatter_gather = false;             // send 1/t of boundary activations, all-gather after
  bool tp_comm_overlap = false;            // sequence parallelism's all-gathers and reduce-scatters split
                                           // into t token blocks, pipelined with the GEMMs (a ring)
  Precision precision = Precision::bf16;   // compute type; fp32 on the CPU backend
  bool fused_ops = true;                   // fused bias+GeLU, bias+dropout+add, scale+mask+softmax
  Attention attention = Attention::unfused;  // unfused: GEMM, softmax, GEMM (the paper); flash: one fused kernel
  bool distributed_optimizer = false;      // optimizer state sharded over the data-parallel group
  bool overlap_grad_reduce = true;         // gradient buckets reduced during the backward, else after it
  bool overlap_param_gather = true;        // distributed optimizer: the parameter all-gather is waited
                                           // for before the next forward, else right after the step
  bool grad_accumulation_fusion = true;    // weight-gradient GEMMs add into the fp32 gradients directly;
                                           // false: a separate pass per micro-batch (Megatron-LM of 2021)
  std::uint64_t seed = 1;                  // weights and synthetic data are pure functions of it
  bool deterministic = false;              // GPU: bitwise-repeatable runs (no floating-point atomics in
                                           // reductions, cuDNN's deterministic attention backward)

  // Products in 64 bits, limited to int: validate() bounds t·p·d, but these are also asked of configs it refuses.
  int world_size() const { return clamp_int(std::int64_t{tp} * pp * dp); }
  // m: micro-batches per pipeline per iteration, B / (b·d).
  int micro_batches() const {
    const std::int64_t bd = std::int64_t{micro_batch} * dp;
    return bd > 0 ? clamp_int(global_batch / bd) : 0;
  }
};

std::string to_string(Recompute r);
std::string to_string(Precision p);
std::string to_string(Attention a);

}  // namespace ptdp
