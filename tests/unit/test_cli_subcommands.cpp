// `ptdp`'s subcommands: an unknown one is refused (exit 2, named) with or
// without --help; every known one's --help prints its own help and exits 0,
// and README's table names each with an example.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;

// The subcommands the main help lists, and the internal ones it hides (run by `ptdp sweep` and its Slurm jobs).
const std::vector<std::string> kListed = {"train", "project", "validate", "compare", "history", "sweep",
                                          "calibrate", "slice", "export", "accept"};
const std::vector<std::string> kHidden = {"sweep-point", "sweep-slurm-point"};

TEST(CliSubcommands, AnUnknownSubcommandIsRefusedNamingIt) {
  ScratchDir dir("subcommand-unknown");
  for (const std::string args : {"diff", "diff --help", "--help diff", "diff -h", "diff --config c.json"}) {
    const auto r = test::run_command(test::ptdp_cli() + " " + args, dir);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("unknown subcommand 'diff'"), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(CliSubcommands, EverySubcommandsHelpExitsZero) {
  ScratchDir dir("subcommand-help");
  const auto main_help = test::run_command(test::ptdp_cli() + " --help", dir);
  EXPECT_EQ(main_help.status, 0) << main_help.err;
  for (const std::string& name : kListed)
    EXPECT_NE(main_help.out.find("  " + name + " "), std::string::npos) << name << " not in\n" << main_help.out;
  std::vector<std::string> all = kListed;
  all.insert(all.end(), kHidden.begin(), kHidden.end());
  for (const std::string& name : all) {
    for (const std::string help : {" --help", " -h"}) {
      const auto r = test::run_command(test::ptdp_cli() + " " + name + help, dir);
      EXPECT_EQ(r.status, 0) << name << help << "\n" << r.err;
      EXPECT_NE(r.out.find("ptdp " + name), std::string::npos) << name << help << "\n" << r.out;
    }
  }
}

// README's "What can I do" table has a row for every subcommand, with an example.
TEST(CliSubcommands, TheReadmeTableHasEverySubcommand) {
  const std::string readme = test::read_file(std::string(PTDP_SOURCE_DIR) + "/README.md");
  std::vector<std::string> all = kListed;
  all.insert(all.end(), kHidden.begin(), kHidden.end());
  for (const std::string& name : all) {
    const std::size_t row = readme.find("\n| `" + name + "` |");
    ASSERT_NE(row, std::string::npos) << name;
    const std::string line = readme.substr(row + 1, readme.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find("`ptdp " + name + " "), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace ptdp
