// fp16 dynamic loss scaling: an overflow skips the step and halves the scale,
// a window of good steps doubles it, bf16/fp32 never scale or skip.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/optim/loss_scaler.h"

namespace ptdp {
namespace {

TEST(LossScaler, OverflowSkipsAndHalvesGoodStepsGrow) {
  LossScaler s(true, 1024.0, 3);
  EXPECT_DOUBLE_EQ(s.scale(), 1024.0);
  EXPECT_FALSE(s.update(std::numeric_limits<double>::infinity()));
  EXPECT_DOUBLE_EQ(s.scale(), 512.0);
  EXPECT_FALSE(s.update(std::nan("")));
  EXPECT_DOUBLE_EQ(s.scale(), 256.0);
  EXPECT_EQ(s.skipped(), 2);
  EXPECT_TRUE(s.update(3.0));
  EXPECT_TRUE(s.update(3.0));
  EXPECT_DOUBLE_EQ(s.scale(), 256.0);
  EXPECT_TRUE(s.update(3.0));  // the third good step in a row
  EXPECT_DOUBLE_EQ(s.scale(), 512.0);
  LossScaler floor(true, 1.0, 3);
  floor.update(std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(floor.scale(), 1.0);
}

TEST(LossScaler, DisabledNeverScalesOrSkips) {
  LossScaler s(false);
  EXPECT_DOUBLE_EQ(s.scale(), 1.0);
  EXPECT_TRUE(s.update(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(s.skipped(), 0);
}

}  // namespace
}  // namespace ptdp
