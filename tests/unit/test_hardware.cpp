// The machine at hand: GPU names as CUDA reports them mapped to the shipped
// profiles, the refusal naming a GPU without one, how a named profile
// contradicts the hardware, and rank placement from host names.
#include <gtest/gtest.h>

#include "core/comm/placement.h"
#include "core/config/config.h"
#include "core/config/hardware.h"

namespace ptdp {
namespace {

TEST(Hardware, GpuNamesMapToTheShippedProfiles) {
  EXPECT_EQ(profile_for_gpu("NVIDIA H100 80GB HBM3"), "h100-80gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA H100 PCIe"), "h100-80gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA H200"), "h200-141gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA H200 NVL"), "h200-141gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA A100 80GB PCIe"), "a100-80gb");
  EXPECT_EQ(profile_for_gpu("NVIDIA A100-SXM4-40GB"), "");  // the A100 profile is the 80 GB part
  EXPECT_EQ(profile_for_gpu("NVIDIA L40S"), "");
  EXPECT_EQ(profile_for_gpu(""), "");
}

Hardware gpu(const std::string& name, int ranks_per_host = 1) {
  Hardware hw;
  hw.device = Device::cuda;
  hw.name = name;
  hw.ranks_per_host = ranks_per_host;
  return hw;
}

TEST(Hardware, TheMachineAtHandIsTheProfileOfItsDeviceWithItsRanksPerHost) {
  Hardware cpu;
  cpu.ranks_per_host = 3;
  const Machine host = machine_at_hand(cpu, default_machines_dir());
  EXPECT_EQ(host.name, "cpu-host");
  EXPECT_EQ(host.gpus_per_node, 3);
  EXPECT_NE(host.sources.at("gpus_per_node").find("detected"), std::string::npos);
  EXPECT_EQ(machine_at_hand(gpu("NVIDIA H200", 8), default_machines_dir()).name, "h200-141gb");
  try {
    machine_at_hand(gpu("NVIDIA L40S"), default_machines_dir());
    FAIL() << "a GPU without a profile is refused";
  } catch (const ConfigRefused& e) {
    EXPECT_EQ(e.errors().front().field, "machine");
    EXPECT_NE(e.errors().front().message.find("\"NVIDIA L40S\""), std::string::npos) << e.errors().front().message;
  }
}

TEST(Hardware, ANamedProfileThatContradictsTheHardwareIsNamed) {
  const Machine h100 = load_machine("h100-80gb", default_machines_dir());
  Hardware cpu;
  cpu.name = "AMD EPYC";
  auto m = hardware_mismatches(h100, cpu);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("cuda machine"), std::string::npos) << m[0];
  m = hardware_mismatches(h100, gpu("NVIDIA A100-SXM4-80GB"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("a100-80gb"), std::string::npos) << m[0];
  m = hardware_mismatches(h100, gpu("NVIDIA H100 80GB HBM3", 16));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("gpus_per_node=8, below the 16 ranks"), std::string::npos) << m[0];
  EXPECT_TRUE(hardware_mismatches(h100, gpu("NVIDIA H100 80GB HBM3", 8)).empty());
  EXPECT_TRUE(hardware_mismatches(load_machine("cpu-host", default_machines_dir()), cpu).empty());
}

TEST(Hardware, TheBlockReadsBack) {
  Hardware hw = gpu("NVIDIA H100 80GB HBM3", 4);
  hw.profile = "a100-80gb";
  hw.mismatch = {"not the profile of this GPU"};
  const nlohmann::json j = to_json(hw);
  EXPECT_EQ(j["profile_chosen"], "named");
  EXPECT_EQ(to_json(hardware_of(JsonAt(j, "test"))), j);
}

TEST(Placement, LocalRanksAndNodesFollowTheHostNamesInWorldOrder) {
  const auto places = placement_of({"a", "a", "b", "a", "b"});
  ASSERT_EQ(places.size(), 5u);
  const int local[] = {0, 1, 0, 2, 1}, node[] = {0, 0, 1, 0, 1};
  for (std::size_t r = 0; r < places.size(); ++r) {
    EXPECT_EQ(places[r].local_rank, local[r]) << r;
    EXPECT_EQ(places[r].node, node[r]) << r;
  }
  EXPECT_EQ(ranks_per_host(places), 3);
  EXPECT_EQ(ranks_per_host({}), 1);
}

}  // namespace
}  // namespace ptdp
