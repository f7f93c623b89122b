// Replays the refused inputs of the readers whose values reach a shell
// (tests/corpus/README.md): launcher templates (Launcher::parse), --fault
// specs (parse_fault, for a job of 2 ranks running 3 iterations) and sweeps
// whose labels, series or names would put a line of code into an emitted Slurm
// script (`ptdp sweep FILE --emit-slurm DIR`: exit 2, the field named, nothing
// written). Each file has the message its refusal must contain; a file without
// one here, or one here without its file, fails the test.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "core/launch/launcher.h"
#include "core/runtime/fault_spec.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;

fs::path slurm_corpus(const std::string& folder) { return fs::path(PTDP_SOURCE_DIR) / "tests" / "corpus" / folder; }

// The refusal of one corpus file: every message, or "" when it was accepted.
using RefusalOf = std::function<std::string(const fs::path&)>;

// Every file of tests/corpus/FOLDER refused with its expected message, and every expected message's file there.
void replay_corpus(const std::string& folder, const std::map<std::string, std::string>& expected,
                   const RefusalOf& refusal) {
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(slurm_corpus(folder))) files.insert(e.path().filename().string());
  for (const std::string& file : files) {
    const auto want = expected.find(file);
    if (want == expected.end()) {
      ADD_FAILURE() << folder << "/" << file << " has no expected message in this test";
      continue;
    }
    const std::string got = refusal(slurm_corpus(folder) / file);
    EXPECT_NE(got, "") << folder << "/" << file << " was accepted";
    EXPECT_NE(got.find(want->second), std::string::npos) << folder << "/" << file << " refused with:\n" << got;
  }
  for (const auto& [file, message] : expected) EXPECT_EQ(files.count(file), 1u) << folder << "/" << file << " is missing";
}

TEST(InputCorpusSlurm, LauncherTemplatesAreRefusedNamingTheProblem) {
  const std::map<std::string, std::string> expected = {
      {"newline_then_command.txt", "holds a control character (0x0a) at byte 10; a template is one line"},
      {"carriage_return.txt", "holds a control character (0x0d) at byte 10"},
      {"tab.txt", "holds a control character (0x09) at byte 4"},
      {"nul_byte.txt", "holds a control character (0x00) at byte 10"},
      {"cmd_in_double_quotes.txt", "{cmd} at 7 is inside double quotes; write placeholders unquoted"},
      {"cmd_in_single_quotes.txt", "{cmd} at 6 is inside single quotes"},
      {"cmd_after_backslash.txt", "{cmd} at 6 is after a backslash"},
      {"ranks_in_double_quotes.txt", "{ranks} at 9 is inside double quotes"},
      {"unknown_placeholder.txt", "unknown placeholder {tasks}; known: {ranks}"},
      {"placeholder_command_substitution.txt", "unknown placeholder {$(touch injected)}"},
      {"no_cmd.txt", "must hold {cmd} exactly once"},
      {"cmd_twice.txt", "must hold {cmd} exactly once"},
      {"not_closed.txt", "'{' at 14 is not closed"},
      {"too_long.txt", "4111 bytes, more than the 4096 a launcher line may hold"},
  };
  replay_corpus("launcher", expected, [](const fs::path& f) {
    try {
      Launcher::parse(test::read_file(f), "mpirun");
    } catch (const LauncherRefused& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

TEST(InputCorpusSlurm, FaultSpecsAreRefusedNamingThePart) {
  const std::string kinds = " is not kill, hang, oom, alloc, nan or slow";
  const std::string ranks = " is not an integer from 0 to 1 (the job's 2 ranks)";
  const std::string iterations = " is not an integer from 0 to 2 (the run's 3 iterations)";
  const std::string factor = " is not a number in (1, 100]";
  const std::string form = "is not KIND:RANK:ITERATION (KIND kill, hang, oom, alloc or nan) nor slow:RANK:FACTOR";
  const std::map<std::string, std::string> expected = {
      {"kind_unknown.txt", "the kind \"explode\"" + kinds},
      {"kind_command_substitution.txt", "the kind \"$(touch injected)\"" + kinds},
      {"too_few_parts.txt", form},
      {"too_many_parts.txt", form},
      {"rank_negative.txt", "the rank \"-1\"" + ranks},
      {"rank_wraps_32_bits.txt", "the rank \"4294967296\"" + ranks},
      {"rank_beyond_64_bits.txt", "the rank \"99999999999999999999\"" + ranks},
      {"rank_outside_job.txt", "the rank \"2\"" + ranks},
      {"rank_plus_sign.txt", "the rank \"+1\"" + ranks},
      {"rank_space.txt", "the rank \" 1\"" + ranks},
      {"iteration_negative.txt", "the iteration \"-1\"" + iterations},
      {"iteration_past_run.txt", "the iteration \"3\"" + iterations},
      {"iteration_wraps_32_bits.txt", "the iteration \"4294967297\"" + iterations},
      {"iteration_newline.txt", "the iteration \"0\\ntouch injected\"" + iterations},
      {"slow_nan.txt", "the factor \"nan\"" + factor},
      {"slow_infinite.txt", "the factor \"inf\"" + factor},
      {"slow_huge.txt", "the factor \"1e9\"" + factor},
      {"slow_one.txt", "the factor \"1\"" + factor},
      {"slow_below_one.txt", "the factor \"0.5\"" + factor},
      {"slow_negative.txt", "the factor \"-2\"" + factor},
      {"slow_hex.txt", "the factor \"0x10\"" + factor},
      {"slow_overflows_double.txt", "the factor \"1e400\"" + factor},
  };
  replay_corpus("fault", expected, [](const fs::path& f) {
    try {
      parse_fault(test::read_file(f), 2, 3);
    } catch (const FaultRefused& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

TEST(InputCorpusSlurm, SweepsThatWouldPutCodeIntoAScriptAreRefusedWithNothingWritten) {
  const test::ScratchDir dir("corpus-slurm-sweep");
  const std::string control = ": holds a control character ";
  const std::string name = "/name: must be a file name of letters, digits, '_', '-' and '.'";
  const std::map<std::string, std::string> expected = {
      {"label_newline.json", "points[0] label (paper.label) \"t1\\ntouch injected\"" + control + "(0x0a) at byte 2"},
      {"label_carriage_return.json", "points[0] label (paper.label) \"p1\\rtouch injected\"" + control + "(0x0d)"},
      {"label_vertical_tab.json", "points[1] label (paper.label) \"p2\\u000btouch injected\"" + control + "(0x0b)"},
      {"series_newline.json", "points[0] series (paper.series) \"batch\\n$(touch injected)\"" + control + "(0x0a) at byte 5"},
      {"tag_label_newline.json", "points[1] label (paper.label) \"x\\n`touch injected`\"" + control + "(0x0a) at byte 1"},
      {"name_newline.json", name},
      {"name_command_substitution.json", name},
      {"name_backticks.json", name},
      {"name_semicolon.json", name},
  };
  replay_corpus("slurm_sweep", expected, [&](const fs::path& f) {
    const test::Run r = test::run_command(test::ptdp_cli() + " sweep " + f.string() + " --emit-slurm jobs", dir);
    EXPECT_FALSE(fs::exists(dir.path() / "jobs")) << f << ": something was written";
    return r.status == 2 ? r.err : std::string();
  });
}

// The corpus through the commands: `ptdp sweep --launcher` and `ptdp train --fault` exit 2 naming the option.
TEST(InputCorpusSlurm, TheCommandsExitTwoNamingTheOption) {
  const test::ScratchDir dir("corpus-slurm-commands");
  dir.write("s.json", test::tiny_cpu_sweep_json("corpus_commands").dump());
  dir.write("tiny.json", test::tiny_config_json().dump());
  const auto run = [&](const std::string& args) { return test::run_command(test::ptdp_cli() + " " + args, dir); };
  const std::string launcher = (slurm_corpus("launcher") / "newline_then_command.txt").string();
  const test::Run emit = run("sweep s.json --emit-slurm jobs --launcher \"$(cat " + launcher + ")\"");
  EXPECT_EQ(emit.status, 2) << emit.err;
  EXPECT_NE(emit.err.find("--launcher: launcher template \"srun {cmd}\\ntouch injected\": holds a control"),
            std::string::npos) << emit.err;
  EXPECT_FALSE(fs::exists(dir.path() / "jobs"));
  const std::string fault = (slurm_corpus("fault") / "iteration_past_run.txt").string();
  const test::Run train = run("train --config tiny.json --iterations 3 --out r.json --fault \"$(cat " + fault + ")\"");
  EXPECT_EQ(train.status, 2) << train.err;
  const std::string named = "--fault: --fault=nan:0:3: the iteration \"3\" is not an integer from 0 to 2";
  EXPECT_NE(train.err.find(named + " (the run's 3 iterations)"), std::string::npos) << train.err;
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
}

}  // namespace
}  // namespace ptdp
