// Which plan.attention a build can run where: "flash" is cuDNN's fused
// attention, so it is refused on the CPU and, in a build without cuDNN, on
// CUDA, with a reason naming plan.attention; "unfused" runs everywhere.
#include <gtest/gtest.h>

#include "core/runtime/backend.h"

namespace ptdp {
namespace {

TEST(AttentionAvailability, UnfusedRunsOnEveryDevice) {
  EXPECT_EQ(attention_unavailable("cpu", Attention::unfused), "");
  EXPECT_EQ(attention_unavailable("cuda", Attention::unfused), "");
}

TEST(AttentionAvailability, FlashIsRefusedOnTheCpu) {
  const std::string why = attention_unavailable("cpu", Attention::flash);
  EXPECT_NE(why.find("plan.attention"), std::string::npos) << why;
  EXPECT_NE(why.find("--device cuda"), std::string::npos) << why;
}

TEST(AttentionAvailability, FlashOnCudaNeedsCudnn) {
  const std::string why = attention_unavailable("cuda", Attention::flash);
#ifdef PTDP_HAVE_CUDNN
  EXPECT_EQ(why, "");
#else
  EXPECT_NE(why.find("plan.attention"), std::string::npos) << why;
  EXPECT_NE(why.find("cuDNN"), std::string::npos) << why;
#endif
}

}  // namespace
}  // namespace ptdp
