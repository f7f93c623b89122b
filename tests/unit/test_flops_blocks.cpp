// Parameter and FLOP counts of Llama-style blocks (issue 19) against published
// counts: Llama 3's parameter counts and training FLOPs, PaLM's per-token
// formula and Megatron-LM's FLOP count for GQA + SwiGLU.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/accounting/flops.h"
#include "core/results/result.h"
#include "tests/llama_test_util.h"

namespace ptdp {
namespace {

// Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024, Table 3): the
// three sizes' layers, model dimension, FFN dimension, heads, kv heads;
// vocabulary 128,256; RoPE, RMSNorm, SwiGLU, no biases, untied output; 8K context.
Model llama3(int layers, int hidden, int ffn, int heads) {
  Model m;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = ffn;
  m.heads = heads;
  m.kv_heads = 8;
  m.seq_len = 8192;
  m.vocab = 128256;
  return test::llama_block(m);
}
Model llama3_8b() { return llama3(32, 4096, 14336, 32); }
Model llama3_70b() { return llama3(80, 8192, 28672, 64); }
Model llama3_405b() { return llama3(126, 16384, 53248, 128); }
double billions(const Model& m) { return static_cast<double>(parameter_count(m)) / 1e9; }

TEST(FlopsBlocks, Llama3ParameterCountsArePublished) {
  // Hugging Face's model pages list meta-llama/Meta-Llama-3-8B at 8.03B and
  // Meta-Llama-3-70B at 70.6B parameters; the paper names 405B. By hand, e.g. 8B:
  // 32·(2·4096² + 4096·2·8·128 + 3·4096·14336 + 2·4096) + 2·128256·4096 + 4096.
  EXPECT_EQ(parameter_count(llama3_8b()), 8030261248);
  EXPECT_EQ(parameter_count(llama3_70b()), 70553706496);
  EXPECT_EQ(parameter_count(llama3_405b()), 405853388800);
  EXPECT_NEAR(billions(llama3_8b()), 8.03, 0.005);
  EXPECT_NEAR(billions(llama3_70b()), 70.6, 0.05);
  EXPECT_NEAR(billions(llama3_405b()), 405.9, 0.05);
}

TEST(FlopsBlocks, Llama3TrainingComputeIsSixNDPlusAttention) {
  // Llama 3 paper, Section 1 (introduction): the 405B model pre-trained on 15.6T tokens
  // with 3.8e25 FLOPs, i.e. 6·N·D.
  const Model m = llama3_405b();
  const double N = static_cast<double>(parameter_count(m)), D = 15.6e12;
  EXPECT_NEAR(6 * N * D / 3.8e25, 1.0, 0.005);
  // Ours per token: 6 per weight multiplied (every parameter but the input
  // embedding and the norms) plus the attention scores, 3·4·s·h a layer.
  const double per_token = model_flops_no_recompute(m, 1) / m.seq_len;
  const double h = m.hidden, s = m.seq_len, l = m.layers, V = m.vocab;
  const double multiplied = N - V * h - (2 * l + 1) * h;
  EXPECT_NEAR(per_token / (6 * multiplied + 12 * l * h * s), 1.0, 1e-12);
  // So the 6ND count is ours less attention, plus the embedding lookup it counts.
  EXPECT_NEAR((per_token - 12 * l * h * s) * D / 3.8e25, 1.0, 0.01);
}

TEST(FlopsBlocks, PalmAppendixBFormula) {
  // PaLM (Chowdhery et al. 2022, Appendix B): model FLOPs per token
  // 6N + 12·L·H·Q·T with N the non-embedding parameters (matmul weights), L
  // layers, H·Q = h, T = s. Checked on a GPT block and on the Llama 3 70B block.
  for (const Model& m : {Model{24, 2304, 24, 2048, 51200, 0}, llama3_70b()}) {
    const double h = m.hidden, s = m.seq_len, l = m.layers, f = m.ffn();
    const double g_d = static_cast<double>(m.kv()) * m.head_dim();
    const double mats = m.activation == Activation::swiglu ? 3 : 2;
    // q, kv, out, MLP; the logits' V·h as the output weights.
    const double non_embedding = l * (2 * h * h + 2 * g_d * h + mats * h * f) + h * m.vocab;
    const double palm = 6 * non_embedding + 12 * l * h * s;
    EXPECT_NEAR(model_flops_no_recompute(m, 1) / s / palm, 1.0, 1e-12) << "h=" << m.hidden;
  }
}

TEST(FlopsBlocks, MegatronCountForGqaSwiglu) {
  // Megatron-LM, megatron/training/training.py, num_floating_point_operations
  // (transformer_flops, commit 001b00c2 of NVIDIA/Megatron-LM): per token
  // 3·2·[l·(h·(a·d + 2·g·d) + a·d·s/2·2 + a·d·h + 3·h·f) + h·V'] for SwiGLU
  // (ffn_expansion_factor 3) with the causal mask halving attention. Ours counts
  // attention in full: ours less half the attention term is Megatron's. Llama 3 8B
  // (V = 128256 is a multiple of 128, so V' = V).
  const Model m = llama3_8b();
  const double h = 4096, s = 8192, l = 32, ad = 32 * 128, gd = 8 * 128, f = 14336, V = 128256, B = 4;
  const double megatron = B * s * 6 * (l * (h * (ad + 2 * gd) + ad * s / 2 * 2 + ad * h + 3 * h * f) + h * V);
  const double half_attention = 3 * l * attention_scores_flops(m, B) / 2;
  EXPECT_NEAR((model_flops_no_recompute(m, B) - half_attention) / megatron, 1.0, 1e-12);
}

TEST(FlopsBlocks, GqaSwigluAndRecomputeTerms) {
  Model m{2, 64, 4, 16, 128, 96};
  const double B = 2, s = 16, h = 64, f = 96;
  const double gpt = layer_forward_flops(m, B);
  m.kv_heads = 1;  // kv: 2·g·d = 32 columns instead of 2h
  m.activation = Activation::swiglu;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, B), 2 * B * s * (2 * h * h + h * 32 + 3 * h * f) + 4 * B * s * s * h);
  EXPECT_LT(layer_forward_flops(m, B), gpt + 2 * B * s * h * f);
  // Norms, position and biases carry no model FLOPs.
  Model bare = m;
  bare.norm = Norm::rmsnorm;
  bare.position = Position::rope;
  bare.bias = false;
  bare.tied_embeddings = false;
  EXPECT_DOUBLE_EQ(model_flops_no_recompute(bare, B), model_flops_no_recompute(m, B));
  EXPECT_DOUBLE_EQ(hardware_flops(m, B, Recompute::full) - hardware_flops(m, B, Recompute::none),
                   2 * layer_forward_flops(m, B));
  EXPECT_DOUBLE_EQ(hardware_flops(m, B, Recompute::selective) - hardware_flops(m, B, Recompute::none),
                   2 * 4 * B * s * s * h);
}

TEST(FlopsBlocks, ParametersOfEachArchitectureField) {
  const Model gpt{2, 64, 4, 16, 128, 96};
  const std::int64_t h = 64, f = 96, s = 16, V = 128;
  EXPECT_EQ(layer_parameter_count(gpt), 4 * h * h + 2 * h * f + f + 9 * h);
  Model m = gpt;
  m.kv_heads = 2;  // kv 2·2·16 = 64 columns: weights h·64, biases 64
  EXPECT_EQ(layer_parameter_count(m), 2 * h * h + h * 64 + 2 * h * f + (h + 64 + h) + f + h + 4 * h);
  m.activation = Activation::swiglu;  // gate, up, down; biases 2f + h
  m.norm = Norm::rmsnorm;             // gamma only
  EXPECT_EQ(layer_parameter_count(m), 2 * h * h + h * 64 + 3 * h * f + (h + 64 + h) + 2 * f + h + 2 * h);
  m.bias = false;
  EXPECT_EQ(layer_parameter_count(m), 2 * h * h + h * 64 + 3 * h * f + 2 * h);
  EXPECT_EQ(embedding_parameter_count(gpt), V * h + s * h + 2 * h);
  m.position = Position::rope;
  m.tied_embeddings = false;
  EXPECT_EQ(embedding_parameter_count(m), 2 * V * h + h);
}

TEST(FlopsBlocks, ResultsNameTheConvention) {
  Config c;
  c.model = llama3_8b();
  c.plan.global_batch = 8;
  const auto j = throughput_metrics(c, 1.0);
  EXPECT_EQ(j["model_flops_convention"], kModelFlopsConvention);
}

}  // namespace
}  // namespace ptdp
