// What `ptdp accept` runs on a machine profile, in order: the GEMM ceiling,
// attention, the all-reduce within a node and across the nodes, data-parallel
// training over one node (the paper's GPT block, then a Llama-style block),
// and the weak-scaling step (d scaled by the nodes) with its projection beside
// it. GPU profiles measure at the shapes of the paper's 1.7B model (Table 1,
// first row; endtoend/configs/gpt-1.7b-h100.json) and of Llama 3 8B
// (llama3-8b-h100.json) in bf16; the CPU profile at small shapes, in fp32,
// that run in seconds.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "core/config/config.h"
#include "core/launch/launcher.h"
#include "endtoend/accept_steps.h"

namespace ptdp::cli {

struct AcceptContext {
  Machine machine;
  int nodes = 1;
  Launcher launcher;
  std::filesystem::path work;  // the steps' configs and outputs
};

// The suite's steps in order (a cross-node step on one node is a skipped spec).
// Writes the configs the steps read into ctx.work.
std::vector<StepSpec> accept_steps(const AcceptContext& ctx);

// How long one step may run on `machine` before it is ended (recorded as timeout).
double accept_step_timeout_s(const Machine& machine);

// The weak-scaling step's figures from its own run's per-GPU throughput and
// the single-node training step's: efficiency = across the nodes / one node,
// measured and projected; failed when the single-node step has no figure.
void finish_weak_scaling(const StepOutcome& single_node, StepOutcome& weak);

}  // namespace ptdp::cli
