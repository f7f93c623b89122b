// cuDNN attention's graph descriptions checked by the cuDNN frontend on the
// CPU (no device, no handle; a compute capability given instead): the
// q and kv strides (K, V with fewer heads than Q: grouped-query attention,
// and g = a), output and statistics layouts, causal mask, scale and
// deterministic option of the forward and backward graphs validate for Ampere
// and Hopper at the shapes the GPU tests use, and an architecture cuDNN's
// SDPA does not support, or kv heads that do not divide the query heads, are
// refused. Skipped in a build without cuDNN.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#ifdef PTDP_HAVE_CUDNN
#include "core/kernels/cuda/cudnn_attention.h"
#endif

namespace ptdp {
namespace {

#ifdef PTDP_HAVE_CUDNN
std::string key_name(const cuda::SdpaKey& k, int sm) {
  return "b " + std::to_string(k.b) + ", s " + std::to_string(k.s) + ", a " + std::to_string(k.a) + ", g " +
         std::to_string(k.g) + ", d " +
         std::to_string(k.head_dim) + ", " + dtype_name(k.type) + (k.deterministic ? ", deterministic" : "") + ", sm " +
         std::to_string(sm);
}

TEST(CudnnGraphs, ForwardAndBackwardValidateOnAmpereAndHopper) {
  for (const int sm : {80, 90})
    for (const DType t : {DType::bf16, DType::f16})
      for (const bool deterministic : {false, true})
        for (const std::int64_t head_dim : {64, 80, 128})
          for (const std::int64_t s : {100, 129}) {
            const cuda::SdpaKey key{2, s, 3, 3, head_dim, t, deterministic};
            EXPECT_EQ(cuda::sdpa_graphs_invalid(key, sm), "") << key_name(key, sm);
          }
}

// Grouped-query (g < a) and multi-query (g = 1) keys: K, V (b, g, s, d) inside
// kv (b, s, g, 2, d), dK, dV of the g kv heads.
TEST(CudnnGraphs, GroupedQueryKeysValidateOnAmpereAndHopper) {
  for (const int sm : {80, 90})
    for (const DType t : {DType::bf16, DType::f16})
      for (const bool deterministic : {false, true})
        for (const auto& [a, g] : {std::pair<std::int64_t, std::int64_t>{4, 2}, {8, 2}, {6, 3}, {4, 1}})
          for (const std::int64_t s : {100, 129}) {
            const cuda::SdpaKey key{2, s, a, g, 64, t, deterministic};
            EXPECT_EQ(cuda::sdpa_graphs_invalid(key, sm), "") << key_name(key, sm);
          }
}

TEST(CudnnGraphs, VoltaIsRefused) {
  const std::string why = cuda::sdpa_graphs_invalid({1, 64, 1, 1, 64, DType::bf16, false}, 70);
  EXPECT_NE(why.find("SM80"), std::string::npos) << why;
}

TEST(CudnnGraphs, HeadDimOutsideCudnnsRangeIsRefused) {
  EXPECT_THROW(cuda::sdpa_graphs_invalid({1, 64, 1, 1, 20, DType::bf16, false}, 90), std::invalid_argument);
  EXPECT_THROW(cuda::sdpa_graphs_invalid({1, 64, 1, 1, 264, DType::bf16, false}, 90), std::invalid_argument);
  EXPECT_THROW(cuda::sdpa_graphs_invalid({1, 64, 1, 1, 64, DType::f32, false}, 90), std::invalid_argument);
}

TEST(CudnnGraphs, KvHeadsThatDoNotDivideTheQueryHeadsAreRefused) {
  EXPECT_THROW(cuda::sdpa_graphs_invalid({1, 64, 4, 3, 64, DType::bf16, false}, 90), std::invalid_argument);
  EXPECT_THROW(cuda::sdpa_graphs_invalid({1, 64, 4, 0, 64, DType::bf16, false}, 90), std::invalid_argument);
}
#else
TEST(CudnnGraphs, SkippedWithoutCudnn) { GTEST_SKIP() << "built without cuDNN: cuDNN graph checks skipped"; }
#endif

}  // namespace
}  // namespace ptdp
