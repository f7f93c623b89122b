// Outputs of the `ptdp` commands: a symbolic link or FIFO at --out is refused
// (exit 2) with its target untouched, a bad output is refused before any work
// so no other output is left, and an exception no command handled ends the
// program with exit 1 and one line instead of std::terminate.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include "tests/cli_test_util.h"
#include "tests/compare_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::string tiny_config(const ScratchDir& dir) { return dir.write("tiny.json", test::tiny_config_json().dump()).string(); }

TEST(CliOutputs, OutToASymbolicLinkOrAFifoIsRefusedAndItsTargetUntouched) {
  ScratchDir dir("cli-out-link");
  const auto target = dir.write("target.txt", "precious");
  fs::create_symlink(target, dir.path() / "link.json");
  ASSERT_EQ(::mkfifo((dir.path() / "pipe.json").c_str(), 0600), 0);
  const auto r1 = test::result("measured", 8, 150, 2).dump();
  const auto a = dir.write("a.json", r1), b = dir.write("b.json", r1);
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"compare " + a.string() + " " + b.string() + " --out link.json", "is a symbolic link"},
      {"compare " + a.string() + " " + b.string() + " --out pipe.json", "is a FIFO"},
      {"project --config " + tiny_config(dir) + " --out link.json", "is a symbolic link"},
      {"project --config " + tiny_config(dir) + " --trace pipe.json", "is a FIFO"},
      {"train --config " + tiny_config(dir) + " --iterations 2 --out link.json", "is a symbolic link"},
      {"sweep " + std::string(PTDP_SOURCE_DIR) + "/sweeps/table1.json --out link.json", "is a symbolic link"}};
  for (const auto& [command, says] : runs) {
    const auto r = test::run_command(test::ptdp_cli() + " " + command, dir);
    EXPECT_EQ(r.status, 2) << command << "\n" << r.out << r.err;
    EXPECT_EQ(r.out, "") << command << ": refused only after starting";
    EXPECT_NE(r.err.find(says), std::string::npos) << command << "\n" << r.err;
    EXPECT_EQ(test::read_file(target), "precious") << command;
    EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json") && fs::is_fifo(dir.path() / "pipe.json")) << command;
  }
}

// The input named as an output, directly, by another spelling or through a
// hard link: refused before any work, the input byte for byte as it was.
TEST(CliOutputs, AnOutputThatIsTheCommandsInputIsRefusedAndTheInputKept) {
  ScratchDir dir("cli-out-input");
  const std::string config = tiny_config(dir), text = test::read_file(config);
  fs::create_hard_link(config, dir.path() / "hard.json");
  const auto r1 = test::result("measured", 8, 150, 2).dump();
  const auto a = dir.write("a.json", r1), b = dir.write("b.json", r1);
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"train --config " + config + " --iterations 2 --out " + config, "is the input --config"},
      {"train --config " + config + " --iterations 2 --trace ./hard.json", "is the input --config"},
      {"project --config " + config + " --out " + (dir.path() / "." / "tiny.json").string(), "is the input --config"},
      {"compare " + a.string() + " " + b.string() + " --out b.json", "is the input NEW"},
      {"compare " + a.string() + " " + b.string() + " --junit " + a.string(), "is the input BASE"}};
  for (const auto& [command, says] : runs) {
    const auto r = test::run_command(test::ptdp_cli() + " " + command, dir);
    EXPECT_EQ(r.status, 2) << command << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << command << "\n" << r.err;
    EXPECT_EQ(test::read_file(config), text) << command;
    EXPECT_EQ(test::read_file(a), r1) << command;
    EXPECT_EQ(test::read_file(b), r1) << command;
  }
}

TEST(CliOutputs, ProjectWithABadOutLeavesNoTrace) {
  ScratchDir dir("cli-out-trace");
  const std::string project = test::ptdp_cli() + " project --config " + tiny_config(dir) + " --trace t.json";
  ASSERT_EQ(test::run_command(project + " --out r.json", dir).status, 0);  // the config itself projects
  fs::remove(dir.path() / "t.json");
  fs::create_directories(dir.path() / "folder");
  dir.write("plain.txt", "x");
  for (const std::string bad : {"folder", "plain.txt/r.json", "t.json"}) {
    const auto r = test::run_command(project + " --out " + bad, dir);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
    EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "t.json")) << bad;
  }
}

// Once trained to the end, then failed to write with exit 1.
TEST(CliOutputs, TrainRefusesAnUnwritableOutputBeforeTraining) {
  ScratchDir dir("cli-out-train");
  dir.write("plain.txt", "x");
  const std::string train = test::ptdp_cli() + " train --config " + tiny_config(dir) + " --iterations 30";
  for (const std::string bad : {"--out plain.txt/r.json", "--trace /proc/ptdp-test/t.json --out r.json"}) {
    const auto r = test::run_command(train + " " + bad, dir);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("iter"), std::string::npos) << "trained before refusing: " << r.out;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
  }
}

TEST(CliOutputs, AnExceptionNoCommandHandledExitsOneWithOneLine) {
  ScratchDir dir("cli-throw");
  const auto r = test::run_command(test::ptdp_cli() + " sweep-point " + std::string(PTDP_SOURCE_DIR) +
                                       "/sweeps/table1.json --point 0 --out p.json --throw", dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("ptdp sweep-point: failed: injected exception (--throw)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "p.json"));
}

}  // namespace
}  // namespace ptdp
