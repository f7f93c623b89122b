// The run-time data folder (core/config/data_root.h): $PTDP_DATA_DIR, else a
// checkout above the executable, else the source tree; a PTDP_DATA_DIR without
// data is refused (exit 2, the variable named) before any work; a ptdp copied
// into another tree reads that tree's machine profiles (the GPU pack's case).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "core/config/config.h"
#include "core/config/data_root.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

// A minimal data tree at `root`: the source's machine profiles and reference
// files, with cpu-host's fp32 peak replaced by `peak`.
void make_data_tree(const fs::path& root, double peak) {
  const fs::path source(PTDP_SOURCE_DIR);
  fs::create_directories(root / "sweeps");
  fs::copy(source / "sweeps" / "machines", root / "sweeps" / "machines", fs::copy_options::recursive);
  fs::create_directories(root / "report");
  fs::copy(source / "report" / "reference", root / "report" / "reference", fs::copy_options::recursive);
  auto host = nlohmann::json::parse(test::read_file(root / "sweeps" / "machines" / "cpu-host.json"));
  host["peak_tflops"]["fp32"] = peak;
  std::ofstream(root / "sweeps" / "machines" / "cpu-host.json") << host.dump(1);
}

class DataRoot : public ::testing::Test {
 protected:
  void SetUp() override { ::unsetenv("PTDP_DATA_DIR"), ::unsetenv("PTDP_MACHINES"); }
  void TearDown() override { ::unsetenv("PTDP_DATA_DIR"); }
};

TEST_F(DataRoot, WithoutTheVariableTheCheckoutHoldingTheBuildIsFound) {
  EXPECT_TRUE(holds_data(data_root())) << data_root();
  EXPECT_EQ(fs::canonical(data_root()), fs::canonical(PTDP_SOURCE_DIR));
}

TEST_F(DataRoot, TheVariableNamesTheFolderAndItsMachineProfiles) {
  ScratchDir dir("data-root");
  make_data_tree(dir.path() / "tree", 0.5);
  ::setenv("PTDP_DATA_DIR", (dir.path() / "tree").c_str(), 1);
  EXPECT_EQ(data_root(), dir.path() / "tree");
  EXPECT_EQ(default_machines_dir(), dir.path() / "tree" / "sweeps" / "machines");
  EXPECT_DOUBLE_EQ(load_machine("cpu-host", default_machines_dir()).peak_for("fp32"), 0.5);
}

TEST_F(DataRoot, AVariableNamingAFolderWithoutDataIsRefusedNamingIt) {
  ScratchDir dir("data-root-empty");
  ::setenv("PTDP_DATA_DIR", dir.path().c_str(), 1);
  try {
    (void)data_root();
    FAIL() << "an empty folder was taken as the data folder";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PTDP_DATA_DIR"), std::string::npos) << e.what();
  }
}

TEST_F(DataRoot, TheCommandRefusesABadVariableBeforeAnyWork) {
  ScratchDir dir("data-root-cli");
  const auto config = dir.write("tiny.json", test::tiny_config_json().dump());
  const auto r = test::run_command("PTDP_DATA_DIR=" + (dir.path() / "nowhere").string() + " " + test::ptdp_cli() +
                                       " project --config " + config.string() + " --out r.json",
                                   dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("PTDP_DATA_DIR"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

// The pack's case: the program in <tree>/.gpupack/run/bin/ reads <tree>'s profiles.
TEST_F(DataRoot, ACopyOfTheProgramInsideAnotherTreeReadsThatTree) {
  ScratchDir dir("data-root-copy");
  const fs::path tree = dir.path() / "tree", bin = tree / ".gpupack" / "run" / "bin";
  make_data_tree(tree, 0.25);
  fs::create_directories(bin);
  fs::copy_file(test::ptdp_cli(), bin / "ptdp");
  const auto config = dir.write("tiny.json", test::tiny_config_json().dump());
  const auto r = test::run_command((bin / "ptdp").string() + " project --config " + config.string() + " --out r.json",
                                   dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "r.json"));
  EXPECT_DOUBLE_EQ(j["machine"]["peak_tflops"]["fp32"].get<double>(), 0.25);
}

}  // namespace
}  // namespace ptdp
