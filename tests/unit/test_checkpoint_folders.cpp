// Checkpoint folders (core/checkpoint/checkpoint_folders.h): a save writes
// through no predictable name, and never into or through a link planted under
// a name it uses (each link's target keeps its bytes); pruning removes only
// the folders ptdp's saves made (its manifest, or its marker for an unfinished
// save) and only the files they wrote; --overwrite's other run goes once the
// new save is durable. Ranks are threads over an in-process world.
#include <gtest/gtest.h>

#include "core/checkpoint/checkpoint_folders.h"
#include "tests/checkpoint_test_util.h"
#include "tests/cli_test_util.h"
#include "tests/config_test_util.h"
#include "tests/equivalence_config.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;

// One rank, or two data-parallel ranks that each write a shard (the distributed optimizer).
Config folders_config(int dp = 1) {
  Config c = test::equivalence_config();
  c.plan.dp = dp;
  c.plan.dp_sharding = (dp > 1) ? DpSharding::optimizer : DpSharding::none;
  return c;
}

// A file outside the save directory for planted links to point at.
fs::path precious(const test::ScratchDir& dir) { return dir.write("precious.txt", "the user's bytes\n"); }

void expect_untouched(const fs::path& target) { EXPECT_EQ(test::read_file(target), "the user's bytes\n") << target; }

// A folder an earlier, unfinished save of `step` left: its marker only.
fs::path unfinished_save(const fs::path& save, int step) {
  const fs::path folder = save / iteration_folder(step);
  fs::create_directories(folder);
  std::ofstream(folder / kSaveMarkerName) << R"({"format": "ptdp.checkpoint/1", "step": )" << step << "}\n";
  return folder;
}

std::string folder_problems_text(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

// Links under the names earlier saves staged through (NAME.tmp) are left alone:
// every file goes through an exclusive temporary of an unpredictable name.
TEST(CheckpointFolders, ASaveWritesThroughNoPredictableName) {
  test::ScratchDir dir("ckpt-folders-names");
  const fs::path target = precious(dir), save = dir.path() / "ck", folder = unfinished_save(save, 2);
  const std::vector<fs::path> planted = {save / "latest.tmp", folder / "manifest.json.tmp",
                                         folder / "rank_00000.safetensors.tmp", folder / "rank_00001.safetensors.tmp",
                                         folder / "ptdp_save.json.tmp"};
  for (const fs::path& p : planted) fs::create_symlink(target, p);
  test::train_span_on_threads(folders_config(2), 0, 2, {}, save);
  expect_untouched(target);
  for (const fs::path& p : planted) EXPECT_TRUE(fs::is_symlink(p)) << p;
  EXPECT_EQ(test::errors_text(checkpoint_problems(save, folders_config(2), "--load")), "");
}

TEST(CheckpointFolders, AnIterFolderThatIsALinkIsNeverWrittenInto) {
  test::ScratchDir dir("ckpt-folders-link");
  const fs::path save = dir.path() / "ck", elsewhere = dir.path() / "elsewhere";
  fs::create_directories(save);
  fs::create_directories(elsewhere);
  fs::create_symlink(elsewhere, save / iteration_folder(2));
  const std::string problems = folder_problems_text(save_dir_problems(save, [](int) { return false; }));
  EXPECT_NE(problems.find((save / iteration_folder(2)).string() + " is a symbolic link"), std::string::npos) << problems;
  EXPECT_THROW(test::train_span_on_threads(folders_config(), 0, 2, {}, save), std::runtime_error);
  EXPECT_TRUE(fs::is_empty(elsewhere));
  EXPECT_FALSE(fs::exists(fs::symlink_status(save / kLatestName)));
}

// A link at a name a save writes in its folder (or at `latest`) is refused
// before any work and the save never writes through it.
TEST(CheckpointFolders, LinksUnderTheNamesASaveWritesAreRefused) {
  for (const std::string name : {"manifest.json", "ptdp_save.json", "rank_00000.safetensors"}) {
    test::ScratchDir dir("ckpt-folders-planted");
    const fs::path target = precious(dir), save = dir.path() / "ck", folder = unfinished_save(save, 2);
    fs::remove(folder / name);
    fs::create_symlink(target, folder / name);
    const std::string problems = folder_problems_text(save_dir_problems(save, [](int step) { return step == 2; }));
    EXPECT_NE(problems.find((folder / name).string() + " is a symbolic link"), std::string::npos) << problems;
    EXPECT_THROW(test::train_span_on_threads(folders_config(), 0, 2, {}, save), std::runtime_error) << name;
    expect_untouched(target);
  }
  test::ScratchDir dir("ckpt-folders-latest");
  const fs::path target = precious(dir), save = dir.path() / "ck";
  fs::create_directories(save);
  fs::create_symlink(target, save / kLatestName);
  const std::string problems = folder_problems_text(save_dir_problems(save, [](int) { return true; }));
  EXPECT_NE(problems.find((save / kLatestName).string() + " is a symbolic link"), std::string::npos) << problems;
  EXPECT_THROW(test::train_span_on_threads(folders_config(), 0, 2, {}, save), std::runtime_error);
  expect_untouched(target);
}

// --keep 1 over saves at 2, 3 and 4: ptdp's own folders go, the user's stay
// (iter_notes, a folder named like a checkpoint that ptdp did not make, a
// file of theirs inside a pruned checkpoint); an unfinished save of another
// step goes with its temporaries.
TEST(CheckpointFolders, PruningRemovesOnlyWhatPtdpsSavesWrote) {
  test::ScratchDir dir("ckpt-folders-prune");
  const fs::path save = dir.path() / "ck";
  fs::create_directories(save / "iter_notes");
  std::ofstream(save / "iter_notes" / "notes.txt") << "mine";
  fs::create_directories(save / iteration_folder(1));
  std::ofstream(save / iteration_folder(1) / "data.txt") << "mine";
  const fs::path stale = unfinished_save(save, 7);
  std::ofstream(stale / "rank_00000.safetensors") << "half a shard";
  std::ofstream(stale / ".rank_00000.safetensors.tmp.123.456") << "a killed save's temporary";
  const Config cfg = folders_config();
  test::train_span_on_threads(cfg, 0, 2, {}, save, {.keep = 1, .replace = {}});
  std::ofstream(save / iteration_folder(2) / "mine.txt") << "mine";
  test::train_span_on_threads(cfg, 2, 3, save, save, {.keep = 1, .replace = {}});
  test::train_span_on_threads(cfg, 3, 4, save, save, {.keep = 1, .replace = {}});
  EXPECT_EQ(test::read_file(save / "iter_notes" / "notes.txt"), "mine");
  EXPECT_EQ(test::read_file(save / iteration_folder(1) / "data.txt"), "mine");
  EXPECT_EQ(test::read_file(save / iteration_folder(2) / "mine.txt"), "mine");
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(save / iteration_folder(2))) left += e.path().filename() == "mine.txt" ? 0 : 1;
  EXPECT_EQ(left, 0u) << "a pruned checkpoint keeps only the user's file";
  EXPECT_FALSE(fs::exists(save / iteration_folder(3)));
  EXPECT_FALSE(fs::exists(stale));
  ASSERT_EQ(saved_folders(save).size(), 1u);
  EXPECT_EQ(saved_folders(save).front().step, 4);
  EXPECT_EQ(resolve_checkpoint(save), save / iteration_folder(4));
}

// The other run's checkpoints (steps 2 and 6) stay until this run's save at 4
// is durable, then go; the one --load reads is never among them (endtoend/train_checkpoint.cpp).
TEST(CheckpointFolders, ReplacedCheckpointsGoOnlyOnceTheNewSaveIsDurable) {
  test::ScratchDir dir("ckpt-folders-replace");
  const fs::path save = dir.path() / "ck";
  const Config cfg = folders_config();
  test::train_span_on_threads(cfg, 0, 2, {}, save);
  test::train_span_on_threads(cfg, 2, 6, save, save);
  test::train_span_on_threads(cfg, 0, 4, {}, save, {.keep = 0, .replace = {2, 6}});
  ASSERT_EQ(saved_folders(save).size(), 1u);
  EXPECT_EQ(saved_folders(save).front().step, 4);
  EXPECT_EQ(test::read_file(save / kLatestName), iteration_folder(4) + "\n");
}

TEST(CheckpointFolders, OnlyIterationFolderNamesHoldASteps) {
  EXPECT_EQ(step_of_folder("iter_0000003"), 3);
  EXPECT_EQ(step_of_folder("iter_12345678"), 12345678);
  for (const char* other : {"iter_notes", "iter_3", "iter_00000003", "iter_-000003", "iter_0000003.bak", "latest",
                            "iter_99999999999"})
    EXPECT_EQ(step_of_folder(other), std::nullopt) << other;
}

}  // namespace
}  // namespace ptdp
