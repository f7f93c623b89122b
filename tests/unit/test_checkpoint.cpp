// Checkpoints (core/checkpoint/checkpoint.h): a save at iteration 3 loaded into
// the same layout continues bit for bit; the distributed optimizer's sharded
// state loads replicated and back; an unfinished save, a corrupted, truncated
// or missing shard and another model are refused, naming the file. Ranks are
// threads over an in-process world (tests/pipeline_pair_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/accounting/checkpoint_size.h"
#include "core/checkpoint/checkpoint.h"
#include "core/checkpoint/safetensors.h"
#include "core/comm/in_process_communicator.h"
#include "core/io/crc32.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "core/accounting/checkpoint_size.h"
#include "core/results/result.h"
#include "core/runtime/trainer.h"
#include "tests/checkpoint_test_util.h"
#include "tests/cli_test_util.h"
#include "tests/config_test_util.h"
#include "tests/equivalence_config.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;

constexpr int kCkptSaveAt = 3, kCkptIterations = 5;

// Iterations [from, to) of cfg on its layout's ranks (threads): loads `load`
// first and saves into `save` after, where given. Rank 0's losses.
std::vector<double> ckpt_train(const Config& cfg, int from, int to, const fs::path& load = {}, const fs::path& save = {}) {
  return test::train_span_on_threads(cfg, from, to, load, save);
}

Config ckpt_layout(int dp, bool distributed_optimizer) {
  Config c = test::equivalence_config();
  c.plan.dp = dp;
  c.plan.dp_sharding = distributed_optimizer ? DpSharding::optimizer : DpSharding::none;
  return c;
}

const std::vector<double>& ckpt_uninterrupted() {
  static const std::vector<double> losses = ckpt_train(ckpt_layout(1, false), 0, kCkptIterations);
  return losses;
}

TEST(Checkpoint, Crc32OfTheCheckValue) { EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u); }

// Same ckpt_layout: every saved value is restored exactly, so the losses are the ckpt_uninterrupted run's, bit for bit.
TEST(Checkpoint, SameLayoutContinuesBitForBit) {
  for (const bool distributed : {false, true}) {
    test::ScratchDir dir(std::string("ckpt-same") + (distributed ? "-distopt" : ""));
    const Config cfg = ckpt_layout(distributed ? 2 : 1, distributed);
    const std::vector<double> full = ckpt_train(cfg, 0, kCkptIterations);
    ckpt_train(cfg, 0, kCkptSaveAt, {}, dir.path());
    const std::vector<double> resumed = ckpt_train(cfg, kCkptSaveAt, kCkptIterations, dir.path());
    ASSERT_EQ(resumed.size(), 2u);
    for (std::size_t i = 0; i < resumed.size(); ++i)
      EXPECT_EQ(resumed[i], full[kCkptSaveAt + i]) << "iteration " << kCkptSaveAt + i << (distributed ? " distopt" : "");
  }
}

// The distributed optimizer's owned 1-D pieces (d = 2) load into one rank's
// whole tensors, and back; the losses within 1e-5 of the ckpt_uninterrupted run's.
TEST(Checkpoint, ShardedOptimizerStateLoadsReplicatedAndBack) {
  const std::pair<Config, Config> cases[] = {{ckpt_layout(2, true), ckpt_layout(1, false)}, {ckpt_layout(1, false), ckpt_layout(2, true)}};
  for (const auto& [saved, loaded] : cases) {
    test::ScratchDir dir("ckpt-reshard");
    ckpt_train(saved, 0, kCkptSaveAt, {}, dir.path());
    const std::vector<double> resumed = ckpt_train(loaded, kCkptSaveAt, kCkptIterations, dir.path());
    for (std::size_t i = 0; i < resumed.size(); ++i) {
      const double ref = ckpt_uninterrupted()[kCkptSaveAt + i];
      EXPECT_NEAR(resumed[i], ref, 1e-5 * std::abs(ref)) << "iteration " << kCkptSaveAt + i << " from d=" << saved.plan.dp;
    }
  }
}

// A save of a tiny run once, for the refusal tests: DIR with iter_0000003.
class CheckpointRefused : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<test::ScratchDir>("ckpt-refused");
    ckpt_train(ckpt_layout(1, false), 0, kCkptSaveAt, {}, dir_->path());
  }
  static void TearDownTestSuite() { dir_.reset(); }
  // A copy of the saved folder to damage.
  static fs::path copy(const std::string& name) {
    const fs::path to = dir_->path() / name;
    fs::remove_all(to);
    fs::copy(dir_->path() / iteration_folder(kCkptSaveAt), to, fs::copy_options::recursive);
    return to;
  }
  static std::string problems(const fs::path& p) {
    return test::errors_text(checkpoint_problems(p, ckpt_layout(1, false), "--load"));
  }
  static inline std::unique_ptr<test::ScratchDir> dir_;
};

TEST_F(CheckpointRefused, TheSavedCheckpointIsAccepted) {
  EXPECT_EQ(problems(dir_->path()), "");
  EXPECT_EQ(resolve_checkpoint(dir_->path()), dir_->path() / iteration_folder(kCkptSaveAt));
}

// A save killed after writing part of a shard and no manifest: the folder is
// refused, the save directory still loads the previous checkpoint.
TEST_F(CheckpointRefused, AnUnfinishedSaveLeavesThePreviousCheckpointLoadable) {
  const fs::path partial = dir_->path() / iteration_folder(kCkptSaveAt + 1);
  fs::create_directories(partial);
  std::ofstream(partial / "rank_00000.safetensors.tmp") << "half a shard";
  EXPECT_NE(problems(partial).find("no manifest.json"), std::string::npos) << problems(partial);
  EXPECT_EQ(problems(dir_->path()), "");
  Manifest m;
  const Config cfg = ckpt_layout(1, false);
  auto world = make_in_process_world(1, 60, nullptr);
  test::run_rank_threads(world, [&](int, Communicator& comm) {
    CpuAllocator alloc;
    CpuOps ops(alloc);
    ProcessGroups groups = make_process_groups(comm, test::plan_topology(cfg));
    auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
    Trainer trainer(cfg, ops, groups, *data);
    load_checkpoint(trainer.training_state(), comm, dir_->path(), &m);
    return std::vector<double>{};
  });
  EXPECT_EQ(m.step, kCkptSaveAt);
  EXPECT_EQ(m.next_sample, kCkptSaveAt * cfg.plan.global_batch);
  fs::remove_all(partial);
}

TEST_F(CheckpointRefused, ACorruptedShardIsNamed) {
  const fs::path folder = copy("corrupted");
  const fs::path shard = folder / "rank_00000.safetensors";
  test::flip_byte(shard, fs::file_size(shard) / 2);
  const std::string text = problems(folder);
  EXPECT_NE(text.find(shard.string() + ": CRC-32 differs"), std::string::npos) << text;
}

TEST_F(CheckpointRefused, ATruncatedShardIsNamed) {
  const fs::path folder = copy("truncated");
  const fs::path shard = folder / "rank_00000.safetensors";
  fs::resize_file(shard, fs::file_size(shard) - 4);
  const std::string text = problems(folder);
  EXPECT_NE(text.find(shard.string() + " holds"), std::string::npos) << text;
}

TEST_F(CheckpointRefused, AMissingShardIsNamed) {
  const fs::path folder = copy("missing");
  fs::remove(folder / "rank_00000.safetensors");
  const std::string text = problems(folder);
  EXPECT_NE(text.find("rank_00000.safetensors (listed in the manifest) is missing"), std::string::npos) << text;
}

TEST_F(CheckpointRefused, AnotherModelIsNamed) {
  Config other = ckpt_layout(1, false);
  other.model.hidden = 128;
  const std::string text = test::errors_text(checkpoint_problems(dir_->path(), other, "--load"));
  EXPECT_NE(text.find("model.hidden is 64 in the checkpoint, 128 in this run's config"), std::string::npos) << text;
  EXPECT_NE(text.find(kManifestName), std::string::npos) << text;
}

// The shards hold what the one definition of checkpoint size counts (fp32:
// masters, m, v; 12 bytes a parameter, one copy over d): their tensor bytes at
// least its state bytes, their files at most those plus its metadata allowance.
TEST(Checkpoint, ShardBytesAreWhatTheSizeModelCounts) {
  for (const bool distributed : {false, true}) {
    test::ScratchDir dir(std::string("ckpt-size") + (distributed ? "-distopt" : ""));
    Config cfg = ckpt_layout(2, distributed);
    cfg.plan.pp = 2;
    cfg.machine = load_machine("cpu-host", default_machines_dir());
    ckpt_train(cfg, 0, 1, {}, dir.path());
    const CheckpointSize size = checkpoint_size(cfg);
    std::int64_t state = 0, files = 0, tensors = 0;
    for (int r = 0; r < cfg.plan.pp; ++r)
      for (int k = 0; k < cfg.plan.dp; ++k) state += size.saved_state(r, k);
    for (const auto& entry : fs::recursive_directory_iterator(dir.path()))
      if (entry.path().extension() == ".safetensors") {
        files += static_cast<std::int64_t>(entry.file_size());
        const SafetensorsFile f(entry.path());
        for (const auto& [name, e] : f.entries()) tensors += static_cast<std::int64_t>(e.end - e.begin);
      }
    EXPECT_EQ(tensors, state) << (distributed ? "distributed optimizer" : "replicated");
    EXPECT_LE(files, size.bytes_total);
  }
}

// metrics.checkpoint: written with nulls where unknown, read back.
TEST(Checkpoint, FiguresRoundTripThroughTheResult) {
  RunResult r;
  r.mode = ResultMode::measured;
  r.config = test::equivalence_config();
  r.config.machine = load_machine("cpu-host", default_machines_dir());
  const nlohmann::json absent = to_json(r);
  EXPECT_TRUE(absent["metrics"]["checkpoint"].is_null());
  CheckpointMetrics f;
  f.bytes_total = 1000000;
  f.save_s = 0.5;
  f.save_gbs = 0.002;
  f.every = 3;
  f.filesystem = {{"path", "/tmp/x"}, {"type", "tmpfs"}};
  r.checkpoint = f;
  const nlohmann::json j = to_json(r);
  EXPECT_TRUE(j["metrics"]["checkpoint"]["load_s"].is_null());
  EXPECT_EQ(j["metrics"]["checkpoint"]["filesystem"]["type"], "tmpfs");
  EXPECT_EQ(to_json(read_result(j)), j);
}

}  // namespace
}  // namespace ptdp
