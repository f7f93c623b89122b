// `ptdp train --save/--load` end to end: a run continued from its checkpoint
// (saved at the end, or by --save-every before the run was killed) reproduces
// the uninterrupted run's losses bit for bit; --keep prunes; the measured
// result reports the saves and the load; bad checkpoints and a save over
// another run's are refused with exit 2, naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include "core/checkpoint/manifest.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using test::ScratchDir;
namespace fs = std::filesystem;

test::Run train_ckpt(const ScratchDir& dir, const std::string& options, nlohmann::json cfg = test::tiny_config_json()) {
  const auto config = dir.write("tiny.json", cfg.dump());
  return test::run_command(test::ptdp_cli() + " train --warmup 0 --config " + config.string() + " " + options, dir);
}

std::vector<double> ckpt_losses(const ScratchDir& dir, const std::string& file) {
  return nlohmann::json::parse(test::read_file(dir.path() / file))["metrics"]["loss"].get<std::vector<double>>();
}

// The losses in `resumed` are those of `full` from iteration `from` on, bit for bit.
void expect_continues(const ScratchDir& dir, const std::string& full, const std::string& resumed, std::size_t from) {
  const std::vector<double> f = ckpt_losses(dir, full), r = ckpt_losses(dir, resumed);
  ASSERT_EQ(r.size() + from, f.size());
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i], f[from + i]) << "iteration " << from + i;
}

TEST(CliCheckpoint, AResumedRunReproducesTheUninterruptedOne) {
  ScratchDir dir("cli-ckpt-resume");
  ASSERT_EQ(train_ckpt(dir, "--iterations 6 --out full.json").status, 0);
  const auto saved = train_ckpt(dir, "--iterations 4 --save ck --save-every 2 --keep 1 --out a.json");
  ASSERT_EQ(saved.status, 0) << saved.err;
  EXPECT_FALSE(fs::exists(dir.path() / "ck" / "iter_0000002"));  // --keep 1
  EXPECT_TRUE(fs::exists(dir.path() / "ck" / "iter_0000004" / "manifest.json"));
  const auto resumed = train_ckpt(dir, "--iterations 6 --load ck --out b.json");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  expect_continues(dir, "full.json", "b.json", 4);
  const auto a = nlohmann::json::parse(test::read_file(dir.path() / "a.json"))["metrics"]["checkpoint"];
  EXPECT_GT(a["bytes_total"].get<double>(), 0);
  EXPECT_GT(a["save_s"].get<double>(), 0);
  EXPECT_EQ(a["every"], 2);
  EXPECT_TRUE(a["load_s"].is_null());
  EXPECT_FALSE(a["filesystem"]["type"].get<std::string>().empty());
  EXPECT_GT(a["save_share"].get<double>(), 0);  // of the run's iterations
  const auto bj = nlohmann::json::parse(test::read_file(dir.path() / "b.json"))["metrics"]["checkpoint"];
  EXPECT_GT(bj["load_s"].get<double>(), 0);
}

// SIGKILL at any moment of a run that saves after every iteration (its time
// goes mostly to writing, fsyncing and renaming): wherever the kill lands in a
// save, the directory names the last finished checkpoint and it loads. A kill
// before the first save finished leaves nothing that claims to load.
TEST(CliCheckpoint, KilledAnywhereInASaveTheLastFinishedCheckpointLoads) {
  int checked = 0;
  for (const char* delay : {"0.6", "0.9", "1.2", "1.6", "2.0"}) {
    ScratchDir dir(std::string("cli-ckpt-kill-") + delay);
    const auto config = dir.write("tiny.json", test::tiny_config_json().dump());
    test::run_command("timeout -s KILL " + std::string(delay) + " " + test::ptdp_cli() + " train --warmup 0 --config " +
                          config.string() + " --iterations 100000 --save-every 1 --keep 2 --save ck",
                      dir);
    if (!holds_checkpoint(dir.path() / "ck")) continue;
    const Manifest m = read_manifest(resolve_checkpoint(dir.path() / "ck") / kManifestName);
    const auto resumed = train_ckpt(dir, "--iterations " + std::to_string(m.step + 1) + " --load ck");
    EXPECT_EQ(resumed.status, 0) << "killed after " << delay << " s, at step " << m.step << ": " << resumed.err;
    ++checked;
  }
  EXPECT_GE(checked, 2) << "the runs were killed before their first save finished";
}

// Killed between saves: the last finished checkpoint (iteration 4) continues the run.
TEST(CliCheckpoint, AKilledRunContinuesFromItsLastSave) {
  ScratchDir dir("cli-ckpt-kill");
  ASSERT_EQ(train_ckpt(dir, "--iterations 6 --out full.json").status, 0);
  const auto killed = train_ckpt(dir, "--iterations 6 --save ck --save-every 2 --fault kill:0:4");
  ASSERT_NE(killed.status, 0);
  EXPECT_EQ(test::read_file(dir.path() / "ck" / "latest"), "iter_0000004\n");
  const auto resumed = train_ckpt(dir, "--iterations 6 --load ck --save ck --out b.json");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  expect_continues(dir, "full.json", "b.json", 4);
}

// Each refusal: exit 2 before any work, the option and the file named.
TEST(CliCheckpoint, BadCheckpointsAreRefused) {
  ScratchDir dir("cli-ckpt-refused");
  ASSERT_EQ(train_ckpt(dir, "--iterations 2 --save ck").status, 0);
  const fs::path shard = dir.path() / "ck" / "iter_0000002" / "rank_00000.safetensors";
  const std::string named = "--load: ck/iter_0000002/rank_00000.safetensors";  // as the option gave the folder
  fs::create_directories(dir.path() / "empty");
  auto r = train_ckpt(dir, "--iterations 4 --load empty");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--load: empty holds no checkpoint"), std::string::npos) << r.err;
  r = train_ckpt(dir, "--iterations 4 --save ck");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--save=ck holds another run's checkpoint"), std::string::npos) << r.err;
  auto other = test::tiny_config_json();
  other["model"]["hidden"] = 128;
  r = train_ckpt(dir, "--iterations 4 --load ck", other);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("model.hidden is 64 in the checkpoint"), std::string::npos) << r.err;
  r = train_ckpt(dir, "--iterations 2 --load ck");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--iterations=2"), std::string::npos) << r.err;
  test::flip_byte(shard, fs::file_size(shard) - 8);
  r = train_ckpt(dir, "--iterations 4 --load ck --out r.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(named + ": CRC-32 differs"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "r.json"));
  fs::remove(shard);
  r = train_ckpt(dir, "--iterations 4 --load ck");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(named + " (listed in the manifest) is missing"), std::string::npos) << r.err;
  r = train_ckpt(dir, "--iterations 2 --save ck --overwrite");
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace ptdp
