// A decoder layer's op records (core/layer_ops/layer_ops.h) held against the real
// layer: one micro-batch's forward and backward run on a recording Ops over the
// CPU backend (core/model/layer_calls.h), and the calls, kind and sizes in
// order, equal the records. For the GPT and Llama blocks (each also with its
// other bias setting), every recompute mode, fused and unfused ops, flash and
// unfused attention plans (the CPU runs the unfused core for both; the calls
// are the same, their pricing differs), on one rank and on rank 0 of t = 2 and
// t = 4 with sequence parallelism (a shape-only group; t = 4 shares Llama's two
// kv heads over pairs of ranks).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "core/comm/shape_only_communicator.h"
#include "core/config/rank_dims.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/model/layer_calls.h"
#include "core/layer_ops/layer_ops.h"

namespace ptdp {
namespace {

enum class Block { gpt, gpt_without_bias, llama, llama_with_bias };

// Tiny blocks: h 64, 4 heads (Llama: 2 kv heads), s 16, b 2.
Model block_model(Block block) {
  Model m;
  m.layers = 2, m.hidden = 64, m.heads = 4, m.seq_len = 16, m.vocab = 128;
  if (block == Block::gpt_without_bias) m.bias = false;
  if (block == Block::llama || block == Block::llama_with_bias) {
    m.kv_heads = 2, m.ffn_hidden = 96, m.norm = Norm::rmsnorm, m.activation = Activation::swiglu;
    m.position = Position::rope, m.bias = block == Block::llama_with_bias, m.tied_embeddings = false;
  }
  return m;
}

std::string describe(OpKind kind, const std::vector<std::int64_t>& sizes) {
  std::ostringstream s;
  s << kind_traits(kind).name << "(";
  for (std::size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  return s.str() + ")";
}

std::string list(const std::vector<std::string>& ops) {
  std::string out;
  for (const auto& op : ops) out += "\n  " + op;
  return out;
}

// The records and the calls of one pass, as text, side by side when they differ.
void expect_same(const std::vector<LayerOp>& records, const std::vector<RecordingOps::Call>& calls, const char* pass) {
  std::vector<std::string> want, got;
  for (const LayerOp& r : records) want.push_back(describe(r.kind, r.sizes));
  for (const RecordingOps::Call& c : calls) got.push_back(describe(c.kind, c.sizes));
  EXPECT_TRUE(want == got) << pass << ": records" << list(want) << "\ncalls" << list(got);
}

void check_layer(Block block, int t, Recompute recompute, bool fused, Attention attention) {
  const Model m = block_model(block);
  Plan p;
  p.tp = t, p.micro_batch = 2, p.global_batch = 2, p.precision = Precision::fp32;
  p.sequence_parallel = t > 1, p.recompute = recompute, p.fused_ops = fused, p.attention = attention;
  SCOPED_TRACE("block " + std::to_string(static_cast<int>(block)) + ", t " + std::to_string(t) + ", recompute " +
               to_string(recompute) + ", fused_ops " + std::to_string(fused) + ", attention " + to_string(attention));
  CpuAllocator alloc;
  CpuOps ops(alloc);
  ShapeOnlyCommunicator tp(0, t);
  Tensor x = ops.empty({2, 16 / t, 64});
  ParamInit how;
  how.kind = Init::normal, how.std = 1, how.key = philox::Key{{7u, 11u}};
  ops.init_param(x, how);
  const LayerCalls calls = record_layer_calls(ops, tp, m, p, x);
  const RankDims r(m, p);
  expect_same(layer_ops(m, p, r, Pass::forward), calls.forward, "forward");
  expect_same(layer_ops(m, p, r, Pass::backward), calls.backward, "backward");
}

TEST(LayerRecords, EqualTheCallsOfTheRealLayer) {
  for (const Block block : {Block::gpt, Block::gpt_without_bias, Block::llama, Block::llama_with_bias})
    for (const int t : {1, 2, 4})
      for (const Recompute recompute : {Recompute::none, Recompute::selective, Recompute::full})
        for (const bool fused : {true, false})
          for (const Attention attention : {Attention::unfused, Attention::flash})
            check_layer(block, t, recompute, fused, attention);
}

// What recompute re-runs: the whole forward (full) or the attention core
// (selective), keeping nothing; the backward list holds them where they run.
TEST(LayerRecords, RecomputeReRunsTheForwardOrTheAttentionCore) {
  const Model m = block_model(Block::gpt);
  Plan p;
  p.micro_batch = 2, p.global_batch = 2;
  const RankDims r(m, p);
  EXPECT_TRUE(layer_ops(m, p, r, Pass::recompute).empty());
  p.recompute = Recompute::selective;
  const auto selective = layer_ops(m, p, r, Pass::recompute);
  ASSERT_EQ(selective.size(), 1u);
  EXPECT_EQ(selective[0].kind, OpKind::attention_forward);
  EXPECT_EQ(selective[0].saved, 0);
  p.recompute = Recompute::full;
  const auto full = layer_ops(m, p, r, Pass::recompute), forward = layer_ops(m, p, r, Pass::forward);
  ASSERT_EQ(full.size(), forward.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(full[i].kind, forward[i].kind);
    EXPECT_EQ(full[i].saved, 0);
  }
  const auto backward = layer_ops(m, p, r, Pass::backward);
  EXPECT_EQ(backward.front().pass, Pass::recompute);
  EXPECT_EQ(backward.back().pass, Pass::backward);
}

// The call at a record's place is taken only when it is the record's: kind and sizes.
TEST(LayerRecords, TakeCallRefusesACallThatIsNotTheRecords) {
  const Model m = block_model(Block::gpt);
  Plan p;
  p.micro_batch = 2, p.global_batch = 2, p.precision = Precision::fp32;
  CpuAllocator alloc;
  CpuOps ops(alloc);
  ShapeOnlyCommunicator tp(0, 1);
  Tensor x = ops.zeros({2, 16, 64}, DType::f32);
  LayerCalls calls = record_layer_calls(ops, tp, m, p, x);
  std::vector<LayerOp> forward = layer_ops(m, p, RankDims(m, p), Pass::forward);
  EXPECT_EQ(take_call(calls, 1, forward[1]).kind, OpKind::linear_forward);  // q
  EXPECT_THROW(take_call(calls, 2, forward[1]), std::runtime_error);      // kv's call: other sizes
  forward[0].sizes[0] += 1;
  EXPECT_THROW(take_call(calls, 0, forward[0]), std::runtime_error);
  EXPECT_THROW(take_call(calls, forward.size(), forward[0]), std::runtime_error);
}

// Benchmark names come from the records (family, part, role or pass), and a
// fused op's parts are records of their own kinds, timed alone.
TEST(LayerRecords, NameTheirBenchmarks) {
  const Model m = block_model(Block::gpt);
  Plan p;
  p.micro_batch = 2, p.global_batch = 2;
  const RankDims r(m, p);
  std::vector<std::string> names;
  for (const Pass pass : {Pass::forward, Pass::backward})
    for (const LayerOp& op : layer_ops(m, p, r, pass)) names.push_back(benchmark_name(op));
  for (const char* name : {"layernorm/ln1_fwd", "gemm/q_fwd", "gemm/kv_fwd", "attention/core_fwd", "bias_gelu/fc1_fwd",
                           "bias_gelu/fc2_bwd", "gemm/fc2_wgrad", "gemm/kv_dgrad", "attention/core_bwd", "add/kv_sum_bwd"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  const LayerOp fc1 = layer_ops(m, p, r, Pass::forward)[6];
  ASSERT_EQ(fc1.kind, OpKind::linear_gelu_forward);
  const LayerOp gemm = fused_part(fc1, kind_traits(fc1.kind).gemm_part);
  const LayerOp gelu = fused_part(fc1, kind_traits(fc1.kind).elementwise_part);
  EXPECT_EQ(benchmark_name(gemm), "gemm/fc1_fwd");
  EXPECT_EQ(gemm.sizes, fc1.sizes);
  EXPECT_EQ(benchmark_name(gelu), "gelu/act_fwd");
  EXPECT_EQ(gelu.sizes, (std::vector<std::int64_t>{32, 256}));  // (n, f): b·s tokens, 4h
  EXPECT_EQ(benchmark_stem(fc1), "bias_gelu/fc1");
  EXPECT_EQ(op_kind_from_name("linear_gelu_forward"), OpKind::linear_gelu_forward);
  EXPECT_FALSE(op_kind_from_name("gemm").has_value());
}

// A compute call with no op kind is refused, so a layer cannot call one the
// records would miss.
TEST(LayerRecords, RecordingOpsRefusesACallWithoutAKind) {
  CpuAllocator alloc;
  CpuOps cpu(alloc);
  RecordingOps ops(cpu);
  Tensor a = ops.zeros({2, 3}, DType::f32), b = ops.zeros({2, 3}, DType::f32);
  EXPECT_THROW(ops.bias_add(a, b), std::logic_error);  // no kind
  ops.add(a, a, b);
  const auto calls = ops.take_calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(describe(calls[0].kind, calls[0].sizes), "add(2, 3)");
  EXPECT_TRUE(ops.take_calls().empty());
}

}  // namespace
}  // namespace ptdp
