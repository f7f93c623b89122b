// The parallel plan: how a model is split over GPUs and how an iteration runs.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/config/bounds.h"
#include "core/config/field.h"

namespace ptdp {

enum class Recompute { none, selective, full };
enum class Precision { fp32, bf16, fp16 };
enum class Attention { unfused, flash };
// What the data-parallel group shards of the model state, each stage adding to
// the one before (ZeRO's stages 0-3; FSDP's NO_SHARD, -, SHARD_GRAD_OP, FULL_SHARD):
// none: every replica holds all; optimizer: the fp32 moments and masters
// (ZeRO-1, Megatron-LM's distributed optimizer); gradients: and the gradients,
// reduce-scattered into owned shards (ZeRO-2); parameters: and the weights,
// all-gathered before each use and freed after it (ZeRO-3, FSDP).
enum class DpSharding { none, optimizer, gradients, parameters };
// The main gradients' type: fp32 (accumulated and reduced in fp32, as
// Megatron-LM and ptdp's runtime keep them) or the compute type (2 bytes in
// bf16/fp16, as DeepSpeed's ZeRO keeps them: the ZeRO paper's 2Ψ).
enum class GradPrecision { fp32, compute };

// Each field's JSON key, bound and meaning: visit_fields below.
struct Plan {
  int tp = 1;              // t
  int pp = 1;              // p
  int dp = 1;              // d
  int virtual_stages = 1;  // v
  std::vector<int> layers_per_stage;  // core/config/chunk_layout.h reads it
  int micro_batch = 1;     // b
  int global_batch = 1;    // B
  std::string schedule = "1f1b";
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  bool scatter_gather = false;
  bool tp_comm_overlap = false;
  Precision precision = Precision::bf16;
  bool fused_ops = true;
  Attention attention = Attention::unfused;
  DpSharding dp_sharding = DpSharding::none;
  GradPrecision grad_precision = GradPrecision::fp32;
  // Megatron-LM's spelling of dp_sharding "optimizer", read from configs only:
  // config_from_json() folds it into dp_sharding and clears it.
  bool distributed_optimizer_alias = false;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  bool grad_accumulation_fusion = true;
  std::uint64_t seed = 1;
  bool deterministic = false;

  // Products in 64 bits, limited to int: validate() bounds t·p·d, but these are also asked of configs it refuses.
  bool shards_optimizer() const { return dp_sharding >= DpSharding::optimizer; }
  bool shards_gradients() const { return dp_sharding >= DpSharding::gradients; }
  bool shards_parameters() const { return dp_sharding == DpSharding::parameters; }
  int world_size() const { return clamp_int(std::int64_t{tp} * pp * dp); }
  // m: micro-batches per pipeline per iteration, B / (b·d).
  int micro_batches() const {
    const std::int64_t bd = std::int64_t{micro_batch} * dp;
    return bd > 0 ? clamp_int(global_batch / bd) : 0;
  }
};

// The field table of "plan" (core/config/field.h), in reading order.
template <FieldsOf<Plan> M, class Visit>
void visit_fields(M& p, Visit&& v) {
  v({.key = "tp", .description = "t: tensor-parallel size (splits heads, MLP and vocabulary)", .bound = count(),
     .required = true}, p.tp);
  v({.key = "pp", .description = "p: pipeline-parallel size (splits layers into stages)", .bound = count(),
     .required = true}, p.pp);
  v({.key = "dp", .description = "d: data-parallel size (replicas over the batch)", .bound = count(),
     .required = true}, p.dp);
  v({.key = "virtual_stages", .description = "v: model chunks per pipeline rank (interleaved schedules)",
     .bound = count()}, p.virtual_stages);
  v({.key = "layers_per_stage", .description = "decoder layers of each virtual stage, in virtual-stage order: p·v "
                                               "positive counts summing to model.layers; absent: l/(p·v) each",
     .written = Written::unless_empty}, p.layers_per_stage);
  v({.key = "micro_batch", .description = "b: sequences per micro-batch", .bound = count(), .required = true},
    p.micro_batch);
  v({.key = "global_batch", .description = "B: sequences per iteration over all replicas; m = B/(b·d) micro-batches",
     .bound = count(), .required = true}, p.global_batch);
  v({.key = "schedule", .description = "pipeline schedule, by its name in core/schedule/'s registry (gpipe, "
                                       "1f1b, interleaved, zb-h1, zb-h2; another name is refused with the list)"},
    p.schedule);
  v({.key = "recompute", .description = "activation recomputation in the backward pass"}, p.recompute);
  v({.key = "sequence_parallel", .description = "split the norms and dropout over t along s"}, p.sequence_parallel);
  v({.key = "scatter_gather", .description = "send 1/t of the boundary activations between stages, all-gather after"},
    p.scatter_gather);
  v({.key = "tp_comm_overlap", .description = "sequence parallelism's all-gathers and reduce-scatters split into t "
                                              "token blocks, pipelined with the GEMMs (a ring)"}, p.tp_comm_overlap);
  v({.key = "precision", .description = "compute type; fp32 on the CPU backend", .refused = "fp8",
     .refused_why = "is out of scope for now: ptdp trains and projects fp32, bf16 and fp16 (FP8's scaling recipes "
                    "are not modelled)"}, p.precision);
  v({.key = "seed", .description = "weights and synthetic data are pure functions of it"}, p.seed);
  v({.key = "fused_ops", .description = "fused bias+GeLU, bias+dropout+add, scale+mask+softmax"}, p.fused_ops);
  v({.key = "attention", .description = "unfused: GEMM, softmax, GEMM (the paper); flash: one fused kernel"},
    p.attention);
  v({.key = "dp_sharding", .description = "what the data-parallel group shards: none; optimizer (moments and masters, "
                                          "ZeRO-1); gradients (and the gradients, ZeRO-2); parameters (and the "
                                          "weights, gathered for each use: ZeRO-3, FSDP)"}, p.dp_sharding);
  v({.key = "grad_precision", .description = "the main gradients' type: fp32 (Megatron-LM, ptdp's runtime) or compute "
                                             "(the compute type, DeepSpeed's ZeRO; modelled by `ptdp project` only)"},
    p.grad_precision);
  v({.key = "distributed_optimizer", .description = "Megatron-LM's name for dp_sharding \"optimizer\" (true: at least "
                                                    "that); read, never written", .written = Written::never},
    p.distributed_optimizer_alias);
  v({.key = "overlap_grad_reduce", .description = "gradient buckets reduced during the backward, else after it"},
    p.overlap_grad_reduce);
  v({.key = "overlap_param_gather", .description = "distributed optimizer: the parameter all-gather is waited for "
                                                   "before the next forward, else right after the step"},
    p.overlap_param_gather);
  v({.key = "grad_accumulation_fusion", .description = "weight-gradient GEMMs add into the fp32 gradients directly; "
                                                       "false: a separate pass per micro-batch (Megatron-LM of 2021)"},
    p.grad_accumulation_fusion);
  v({.key = "deterministic", .description = "GPU: bitwise-repeatable runs (no floating-point atomics in reductions, "
                                            "cuDNN's deterministic attention backward)"}, p.deterministic);
}

inline constexpr std::string_view kRecomputeNames[] = {"none", "selective", "full"};
inline constexpr std::string_view kPrecisionNames[] = {"fp32", "bf16", "fp16"};
inline constexpr std::string_view kAttentionNames[] = {"unfused", "flash"};
inline constexpr std::string_view kDpShardingNames[] = {"none", "optimizer", "gradients", "parameters"};
inline constexpr std::string_view kGradPrecisionNames[] = {"fp32", "compute"};
inline std::span<const std::string_view> spellings(Recompute) { return kRecomputeNames; }
inline std::span<const std::string_view> spellings(Precision) { return kPrecisionNames; }
inline std::span<const std::string_view> spellings(Attention) { return kAttentionNames; }
inline std::span<const std::string_view> spellings(DpSharding) { return kDpShardingNames; }
inline std::span<const std::string_view> spellings(GradPrecision) { return kGradPrecisionNames; }
inline std::string to_string(Recompute r) { return spelling(r); }
inline std::string to_string(Precision p) { return spelling(p); }
inline std::string to_string(Attention a) { return spelling(a); }
inline std::string to_string(DpSharding s) { return spelling(s); }
inline std::string to_string(GradPrecision g) { return spelling(g); }

}  // namespace ptdp
