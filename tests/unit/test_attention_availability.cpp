// Which plan.attention a build can run where: "flash" is cuDNN's fused
// attention, so it is refused on the CPU and, in a build without cuDNN, on
// CUDA, or with a head dim cuDNN does not take, with a reason naming
// plan.attention; "unfused" runs everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/runtime/backend.h"

namespace ptdp {
namespace {

TEST(AttentionAvailability, UnfusedRunsOnEveryDevice) {
  EXPECT_EQ(attention_unavailable(Device::cpu, Attention::unfused), "");
  EXPECT_EQ(attention_unavailable(Device::cuda, Attention::unfused), "");
}

TEST(AttentionAvailability, FlashIsRefusedOnTheCpu) {
  const std::string why = attention_unavailable(Device::cpu, Attention::flash);
  EXPECT_NE(why.find("plan.attention"), std::string::npos) << why;
  EXPECT_NE(why.find("--device cuda"), std::string::npos) << why;
}

TEST(AttentionAvailability, FlashOnCudaNeedsCudnn) {
  const std::string why = attention_unavailable(Device::cuda, Attention::flash);
#ifdef PTDP_HAVE_CUDNN
  EXPECT_EQ(why, "");
#else
  EXPECT_NE(why.find("plan.attention"), std::string::npos) << why;
  EXPECT_NE(why.find("cuDNN"), std::string::npos) << why;
#endif
}

TEST(AttentionAvailability, FlashOnCudaNeedsAHeadDimCudnnTakes) {
  for (const std::int64_t head_dim : {64, 80, 128, 256})
    EXPECT_EQ(attention_unavailable(Device::cuda, Attention::flash, head_dim) == "",
              attention_unavailable(Device::cuda, Attention::flash) == "");
  for (const std::int64_t head_dim : {20, 100, 264}) {
    const std::string why = attention_unavailable(Device::cuda, Attention::flash, head_dim);
    EXPECT_NE(why.find("plan.attention"), std::string::npos) << head_dim << ": " << why;
  }
  EXPECT_EQ(attention_unavailable(Device::cuda, Attention::unfused, 20), "");
}

}  // namespace
}  // namespace ptdp
