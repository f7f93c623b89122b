// `ptdp validate --ablate`: runs in CI in under 30 s, prints one row per
// modelled mechanism and writes JSON with the full model's error and, per
// mechanism switched off, each experiment's error and its change.
#include <gtest/gtest.h>

#include "core/config/mechanisms.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

TEST(PaperAblation, EachMechanismOffInTurnWithinThirtySeconds) {
  const test::ScratchDir dir("ablate");
  test::Run run;
  const double seconds =
      test::seconds_of([&] { run = test::run_command(test::ptdp_cli() + " validate --ablate --out ablation.json", dir); });
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_LT(seconds, 30.0);
  const nlohmann::json j = nlohmann::json::parse(test::read_file(dir.path() / "ablation.json"));
  EXPECT_EQ(j.at("schema"), "ptdp.ablation/1");
  const nlohmann::json& full = j.at("full");
  ASSERT_TRUE(full.contains("table1") && full.contains("figure13") && full.contains("figure7"));
  const std::vector<MechanismSwitch> switches = mechanism_switches();
  ASSERT_EQ(j.at("off").size(), switches.size());
  for (std::size_t i = 0; i < switches.size(); ++i) {
    const nlohmann::json& row = j.at("off")[i];
    EXPECT_EQ(row.at("mechanism"), switches[i].name);
    EXPECT_NE(run.out.find("- " + switches[i].name), std::string::npos) << "no printed row";
    ASSERT_EQ(row.at("experiments").size(), full.size()) << switches[i].name;
    for (const auto& [name, e] : row.at("experiments").items()) {
      for (const char* key : {"points", "mean_abs_error", "max_abs_error", "ordering_violations", "does_not_fit"})
        EXPECT_TRUE(e.contains(key)) << switches[i].name << " " << name << " " << key;
      EXPECT_NEAR(e.at("change").get<double>(),
                  e.at("mean_abs_error").get<double>() - full.at(name).at("mean_abs_error").get<double>(), 1e-12);
    }
  }
  // The switches act: without tensor-parallel communication Figure 13 (t up to 32) is further off.
  for (const auto& row : j.at("off")) {
    if (row.at("mechanism") != "tensor_parallel_comm") continue;
    EXPECT_GT(row.at("experiments").at("figure13").at("change").get<double>(), 0.05);
  }
}

}  // namespace
}  // namespace ptdp
