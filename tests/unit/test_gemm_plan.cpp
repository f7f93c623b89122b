// The GPU-independent planning of ptdp's cuBLASLt GEMMs (core/kernels/cuda/gemm_plan.h):
// alignments cuBLASLt is told, the algorithm-cache key, the epilogue per
// fused-operator case, argument checks and the choice among timed candidates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/kernels/cuda/gemm_plan.h"

namespace ptdp::cuda {
namespace {

const void* at(std::uintptr_t address) { return reinterpret_cast<const void*>(address); }

TEST(GemmPlan, AlignmentIsTheLargestPowerOfTwoUpTo16DividingAddressAndStrides) {
  EXPECT_EQ(alignment_bytes(0x1000, 2048), 16);    // both aligned: capped at 16
  EXPECT_EQ(alignment_bytes(0x1008, 2048), 8);     // address 8-aligned
  EXPECT_EQ(alignment_bytes(0x1000, 37 * 2), 2);   // bf16 rows of 37: 74 bytes
  EXPECT_EQ(alignment_bytes(0x1000, 100 * 2), 8);  // 200 bytes
  EXPECT_EQ(alignment_bytes(0x1002, 64), 2);
  EXPECT_EQ(alignment_bytes(0x1001, 64), 1);
  EXPECT_EQ(alignment_bytes(0x1000, 64, 36), 4);  // a batch stride of 36 bytes
  EXPECT_EQ(alignment_bytes(0, 0), 16);
}

GemmArgs aligned_args() {
  GemmArgs g;
  g.m = 64, g.n = 128, g.k = 32;
  g.a = at(0x10000), g.lda = 32, g.b = at(0x20000), g.ldb = 32, g.c = const_cast<void*>(at(0x30000)), g.ldc = 128;
  g.trans_b = true;
  return g;
}

TEST(GemmPlan, KeyTakesAlignmentsFromTheRealPointersAndLeadingDimensions) {
  GemmArgs g = aligned_args();
  GemmKey key = gemm_key(g);
  EXPECT_EQ(key.align_a, 16);
  EXPECT_EQ(key.align_b, 16);
  EXPECT_EQ(key.align_c, 16);
  g.lda = g.k = 37;                // odd inner size: bf16 rows of 74 bytes
  g.ldb = 37;
  g.c = const_cast<void*>(at(0x30004));  // C 4 bytes past a 16-byte boundary
  key = gemm_key(g);
  EXPECT_EQ(key.align_a, 2);
  EXPECT_EQ(key.align_b, 2);
  EXPECT_EQ(key.align_c, 4);
  g.c_type = ElemType::f32, g.ldc = 129;  // fp32 rows of 516 bytes
  g.c = const_cast<void*>(at(0x30000));
  EXPECT_EQ(gemm_key(g).align_c, 4);
}

TEST(GemmPlan, KeysDifferInEveryFieldThatChangesTheAlgorithm) {
  const GemmArgs base = aligned_args();
  const GemmKey k0 = gemm_key(base);
  EXPECT_EQ(k0, gemm_key(base));
  EXPECT_FALSE(k0 < gemm_key(base));
  std::vector<GemmArgs> variants(10, base);
  variants[0].alpha = 0.5f;
  variants[1].beta = 1.0f;
  variants[2].epilogue = Epilogue::bias, variants[2].bias = at(0x40000);
  variants[3].b = at(0x20008);  // 8-byte aligned B only
  variants[4].batch = 2, variants[4].stride_a = 64 * 32, variants[4].stride_b = 128 * 32, variants[4].stride_c = 64 * 128;
  variants[5] = variants[4], variants[5].stride_c = 64 * 128 + 8;
  variants[6].c_type = ElemType::f32;
  variants[7].ab = ElemType::f16;
  variants[8].epilogue = Epilogue::bias_grad_from_a, variants[8].bias_grad = const_cast<void*>(at(0x40000));
  variants[9] = variants[8], variants[9].bias_grad_type = ElemType::bf16;
  std::vector<GemmKey> keys{k0};
  for (const GemmArgs& v : variants) keys.push_back(gemm_key(v));
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t j = 0; j < keys.size(); ++j) {
      if (i == j) continue;
      EXPECT_NE(keys[i], keys[j]) << i << " vs " << j;
      EXPECT_NE(keys[i] < keys[j], keys[j] < keys[i]) << "a strict total order: " << i << " vs " << j;
    }
}

TEST(GemmPlan, AlphaAndBetaEnterTheKeyOnlyThroughOneAndZero) {
  GemmArgs a = aligned_args(), b = aligned_args();
  a.alpha = 0.5f, b.alpha = 0.25f;  // same algorithm for any alpha ≠ 1
  EXPECT_EQ(gemm_key(a), gemm_key(b));
  a.beta = 1.0f, b.beta = 2.0f;
  EXPECT_EQ(gemm_key(a), gemm_key(b));
}

TEST(GemmPlan, UnbatchedStridesDoNotSplitTheCache) {
  GemmArgs a = aligned_args(), b = aligned_args();
  b.stride_a = 12345;  // ignored when batch == 1
  EXPECT_EQ(gemm_key(a), gemm_key(b));
}

TEST(GemmPlan, EpiloguePerFusedOpsBiasAndGelu) {
  // Forward: fused puts the bias (and GeLU when the aux matrix allows) into the GEMM.
  EXPECT_EQ(forward_epilogue(true, true, false, true), Epilogue::bias);
  EXPECT_EQ(forward_epilogue(true, true, true, true), Epilogue::gelu_aux_bias);
  EXPECT_EQ(forward_epilogue(true, true, true, false), Epilogue::bias);  // aux ld not a multiple of 8
  EXPECT_EQ(forward_epilogue(true, false, false, true), Epilogue::none);
  EXPECT_EQ(forward_epilogue(true, false, true, true), Epilogue::none);
  // Unfused: never an epilogue, the bias and GeLU are separate kernels.
  for (bool bias : {false, true})
    for (bool gelu : {false, true}) EXPECT_EQ(forward_epilogue(false, bias, gelu, true), Epilogue::none);
  // Backward through GeLU: the bias gradient in fp32 first; bf16 may fall back
  // to a 16-bit sum (same range), fp16 (a sum of every token may overflow) to
  // the GeLU gradient alone.
  using P = std::vector<DgeluPlan>;
  EXPECT_EQ(dgelu_plans(true, true, ElemType::bf16),
            (P{{Epilogue::dgelu_bgrad, ElemType::f32}, {Epilogue::dgelu_bgrad, ElemType::bf16}}));
  EXPECT_EQ(dgelu_plans(true, true, ElemType::f16), (P{{Epilogue::dgelu_bgrad, ElemType::f32}, {Epilogue::dgelu, ElemType::f32}}));
  EXPECT_TRUE(dgelu_plans(true, false, ElemType::bf16).empty());
  EXPECT_TRUE(dgelu_plans(false, true, ElemType::bf16).empty());
  EXPECT_EQ(weight_grad_epilogue(true, true), Epilogue::bias_grad_from_a);
  EXPECT_EQ(weight_grad_epilogue(true, false), Epilogue::none);
  EXPECT_EQ(weight_grad_epilogue(false, true), Epilogue::none);
}

TEST(GemmPlan, GeluAuxNeedsALeadingDimensionOf8AndA16ByteAlignedPointer) {
  EXPECT_TRUE(gelu_aux_ok(at(0x1000), 64, ElemType::bf16));
  EXPECT_FALSE(gelu_aux_ok(at(0x1000), 70, ElemType::bf16));  // 70 % 8 != 0
  EXPECT_FALSE(gelu_aux_ok(at(0x1008), 64, ElemType::f16));   // pointer 8-aligned
  EXPECT_TRUE(gelu_aux_ok(at(0x1000), 8, ElemType::f16));
}

TEST(GemmPlan, EpilogueArgumentsAreChecked) {
  GemmArgs g = aligned_args();
  EXPECT_EQ(epilogue_error(g), "");
  g.epilogue = Epilogue::bias;
  EXPECT_NE(epilogue_error(g), "");  // no bias pointer
  g.bias = at(0x40000);
  EXPECT_EQ(epilogue_error(g), "");
  g.epilogue = Epilogue::gelu_aux_bias;
  EXPECT_NE(epilogue_error(g), "");  // no aux
  g.aux = const_cast<void*>(at(0x50000)), g.ld_aux = 128;
  EXPECT_EQ(epilogue_error(g), "");
  g.ld_aux = 100;  // not a multiple of 8
  EXPECT_NE(epilogue_error(g), "");
  g.ld_aux = 120;  // multiple of 8 but less than n = 128
  EXPECT_NE(epilogue_error(g), "");
  GemmArgs w = aligned_args();
  w.epilogue = Epilogue::bias_grad_from_a;
  EXPECT_NE(epilogue_error(w), "");
  w.bias_grad = const_cast<void*>(at(0x60000));
  EXPECT_EQ(epilogue_error(w), "");
  w.batch = 2;
  EXPECT_NE(epilogue_error(w), "");
  GemmArgs d = aligned_args();
  d.epilogue = Epilogue::dgelu, d.aux = const_cast<void*>(at(0x50000)), d.ld_aux = 128;
  EXPECT_EQ(epilogue_error(d), "");  // GeLU gradient without the bias gradient
  d.bias_grad = const_cast<void*>(at(0x60000));
  EXPECT_NE(epilogue_error(d), "");
  GemmArgs stray = aligned_args();
  stray.bias = at(0x40000);  // a bias without its epilogue would be silently ignored
  EXPECT_NE(epilogue_error(stray), "");
}

TEST(GemmPlan, FallbackNoteNamesEpilogueShapeTypesAndAuxStride) {
  GemmArgs g = aligned_args();
  g.m = 8192, g.n = 9216, g.k = 2304, g.epilogue = Epilogue::gelu_aux_bias, g.aux = const_cast<void*>(at(0x80000)), g.ld_aux = 9216;
  EXPECT_EQ(fallback_note(g),
            "cuBLASLt has no gelu_aux_bias algorithm for the bf16 8192x9216x2304 GEMM (aux ld 9216): "
            "the unfused composition runs instead");
  GemmArgs w = aligned_args();
  w.ab = ElemType::f16, w.c_type = ElemType::f32, w.epilogue = Epilogue::bias_grad_from_a, w.m = 3, w.n = 5, w.k = 7;
  EXPECT_EQ(fallback_note(w), "cuBLASLt has no bias_grad_from_a algorithm for the fp16->fp32 3x5x7 GEMM: "
                              "the unfused composition runs instead");
  for (const Epilogue e : {Epilogue::none, Epilogue::bias, Epilogue::gelu_aux_bias, Epilogue::dgelu,
                           Epilogue::dgelu_bgrad, Epilogue::bias_grad_from_a})
    EXPECT_STRNE(epilogue_name(e), "?");
}

TEST(GemmPlan, FastestCandidateIgnoresFailures) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fastest_candidate({0.5f, 0.2f, 0.3f}), 1);
  EXPECT_EQ(fastest_candidate({-1.0f, 0.4f, -1.0f, 0.1f}), 3);
  EXPECT_EQ(fastest_candidate({nan, inf, 0.7f}), 2);
  EXPECT_EQ(fastest_candidate({-1.0f, -1.0f}), -1);
  EXPECT_EQ(fastest_candidate({}), -1);
  EXPECT_EQ(fastest_candidate({0.3f, 0.3f}), 0);  // ties keep the heuristic's order
}

}  // namespace
}  // namespace ptdp::cuda
