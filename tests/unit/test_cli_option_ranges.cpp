// Every numeric option of train, sweep (and its hidden point commands) and
// accept has a stated range (endtoend/option_ranges.h): a negative, wrapped,
// NaN, infinite or absurdly large value is refused with exit 2 naming the
// option, before anything runs. Each command is given an input it would refuse
// for another reason, so that the option's own refusal is what the test sees.
// And --fault: a spec that would hang the run, or name an iteration that never
// comes, is refused the same way (accept --nodes, whose ranks must be counted).
#include <gtest/gtest.h>

#include "tests/accept_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

struct OptionCase {
  std::string command;  // the command and an input it refuses for another reason
  std::string option;
  std::vector<std::string> refused, accepted;  // values outside the range; values at its ends
};

std::vector<OptionCase> option_cases() {
  const std::string train = "train --config refused.json", sweep = "sweep refused.json";
  const std::string point = "sweep-point refused.json --out o.json", slurm_point =
      "sweep-slurm-point refused.json --out o.json --launcher srun";
  const std::string accept = "accept --machine no-such-profile --out out";
  return {
      {train, "--iterations", {"-1", "1000001", "4294967297", "nan", "1.5", "0x10"}, {"0", "1000000"}},
      {train, "--warmup", {"-1", "1000001", "99999999999999999999"}, {"0", "1000000"}},
      {train, "--comm-timeout", {"0", "-1", "nan", "inf", "86401", "1e300", "1e400"}, {"0.001", "86400"}},
      {train, "--save-every", {"-1", "1000001", "4294967296"}, {"0", "1000000"}},
      {train, "--keep", {"-1", "1000001"}, {"0", "1000000"}},
      {sweep, "--jobs", {"0", "-1", "257", "4294967297"}, {"1", "256"}},
      {sweep, "--timeout", {"0", "-5", "nan", "inf", "604801", "1e300"}, {"1", "604800"}},
      {sweep, "--max-ranks", {"0", "-1", "1048577"}, {"1", "1048576"}},
      {sweep, "--max-points", {"0", "1000001", "9223372036854775808"}, {"1", "1000000"}},
      {sweep, "--point-delay-ms", {"-1", "3600001"}, {"0", "3600000"}},
      {sweep, "--crash-point", {"-1", "1000001"}, {"0"}},
      {sweep, "--oom-point", {"-2", "1000001"}, {"1000000"}},
      {point + " --point 0", "--delay-ms", {"-1", "3600001"}, {"0"}},
      {point + " --point 0", "--max-points", {"0", "-1"}, {"5000"}},
      {point, "--point", {"-1", "1000001"}, {"0"}},
      {slurm_point + " --point 0", "--timeout", {"0", "nan", "1e9"}, {"600"}},
      {slurm_point + " --point 0", "--max-points", {"0"}, {"5000"}},
      {slurm_point, "--point", {"-1", "4294967296"}, {"3"}},
      {accept, "--nodes", {"0", "-1", "65537", "4294967297"}, {"1", "65536"}},
  };
}

TEST(CliOptionRanges, EveryNumericOptionIsRefusedOutsideItsRangeNamingIt) {
  ScratchDir dir("option-ranges");
  dir.write("refused.json", "{}");
  for (const OptionCase& c : option_cases()) {
    const std::string named = c.option + ": ";
    for (const std::string& value : c.refused) {
      const auto r = test::run_command(test::ptdp_cli() + " " + c.command + " " + c.option + " " + value, dir);
      EXPECT_EQ(r.status, 2) << c.option << " " << value << "\n" << r.err;
      EXPECT_NE(r.err.find(named + value.substr(0, 40) + " is not "), std::string::npos) << c.option << " " << value
                                                                                      << "\n" << r.err;
    }
    for (const std::string& value : c.accepted) {  // the other input is what is refused then
      const auto r = test::run_command(test::ptdp_cli() + " " + c.command + " " + c.option + " " + value, dir);
      EXPECT_EQ(r.err.find(named), std::string::npos) << c.option << " " << value << " is within the range\n" << r.err;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "o.json"));
}

// --nodes times the profile's ranks per node is counted in 64 bits and bounded by the ranks ptdp runs.
TEST(CliOptionRanges, AcceptRefusesMoreRanksThanPtdpRuns) {
  ScratchDir dir("accept-ranks");
  nlohmann::json wide = test::cpu_host_profile();
  wide["gpus_per_node"] = 1 << 20;
  const auto profile = test::write_profile(dir, "wide", wide);
  const auto r =
      test::run_command(test::ptdp_cli() + " accept --machine " + profile.string() + " --nodes 2 --out out", dir);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--nodes=2 of 1048576 ranks each is more than the 1048576 ranks ptdp runs"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out"));
}

// Specs that would never end the run, or never fire, are refused naming the part (the whole corpus:
// test_input_corpus_slurm.cpp). A slowdown of 1e9 used to be taken: `timeout` ends the run if it is again.
TEST(CliOptionRanges, FaultsThatWouldHangOrNeverFireAreRefused) {
  ScratchDir dir("fault-ranges");
  dir.write("tiny.json", test::tiny_config_json().dump());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--fault hang:0:0", "--fault=hang:0:0: the kind hang needs a job of 2 ranks or more"},
      {"--fault slow:0:1e9", "--fault=slow:0:1e9: the factor \"1e9\" is not a number in (1, 100]"},
      {"--fault kill:0:3",
       "--fault=kill:0:3: the iteration \"3\" is not an integer from 0 to 2 (the run's 3 iterations)"},
      {"--fault kill:4294967296:0", "the rank \"4294967296\" is not an integer from 0 to 0 (the job's 1 rank)"},
  };
  for (const auto& [fault, message] : cases) {
    const auto r = test::run_command("timeout -s KILL 60 " + test::ptdp_cli() +
                                         " train --config tiny.json --iterations 3 --out r.json " + fault, dir);
    EXPECT_EQ(r.status, 2) << fault << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << fault << "\n" << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "r.json")) << fault;
  }
  const auto slow =
      test::run_command(test::ptdp_cli() + " train --config tiny.json --iterations 2 --fault slow:0:100", dir);
  EXPECT_EQ(slow.status, 0) << "the largest slowdown is taken\n" << slow.err;
}

}  // namespace
}  // namespace ptdp
