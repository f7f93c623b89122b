// The one way ptdp writes a file (core/io/staged_file.h): whole or not at all,
// through an exclusive temporary in the destination folder; never through a
// planted link at the path or (for folders ptdp owns) at the folder; nothing
// left behind when the write is abandoned; same_file by device and inode.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/io/staged_file.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

TEST(StagedFile, WritesWholeReplacesAndLeavesNoTemporary) {
  ScratchDir dir("staged");
  const fs::path path = dir.path() / "out.txt";
  write_file_atomic(path, "first");
  write_file_atomic(path, "second, longer", {.durable = true});
  EXPECT_EQ(test::read_file(path), "second, longer");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(StagedFile, AnAbandonedWriteLeavesTheOldFileAndNoTemporary) {
  ScratchDir dir("staged-abandon");
  const fs::path path = dir.path() / "out.txt";
  write_file_atomic(path, "old");
  {
    StagedFile f(path);
    f.write("half of the new");
    EXPECT_TRUE(fs::exists(f.temporary()));
    EXPECT_NE(f.temporary().filename().string().find(".out.txt.tmp."), std::string::npos);
  }  // destroyed before commit
  EXPECT_EQ(test::read_file(path), "old");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(StagedFile, TwoWritersOfOnePathGetTheirOwnTemporaries) {
  ScratchDir dir("staged-two");
  const fs::path path = dir.path() / "out.txt";
  StagedFile a(path), b(path);
  EXPECT_NE(a.temporary(), b.temporary());
  a.write("a"), b.write("b");
  a.commit(), b.commit();
  EXPECT_EQ(test::read_file(path), "b");
}

TEST(StagedFile, ALinkAtThePathIsNeverWrittenThrough) {
  ScratchDir dir("staged-link");
  const auto target = dir.write("precious.txt", "precious");
  fs::create_symlink(target, dir.path() / "out.txt");
  EXPECT_THROW(write_file_atomic(dir.path() / "out.txt", "clobber"), std::runtime_error);
  EXPECT_EQ(test::read_file(target), "precious");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "out.txt"));
  EXPECT_EQ(entries(dir.path()), 2u);  // no temporary left
}

TEST(StagedFile, AFolderThatIsALinkIsRefusedWhereItMustNotBeFollowed) {
  ScratchDir dir("staged-folder");
  fs::create_directories(dir.path() / "elsewhere");
  fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "iter_0000001");
  EXPECT_THROW(write_file_atomic(dir.path() / "iter_0000001" / "manifest.json", "{}", {.folder_no_follow = true}),
               std::runtime_error);
  EXPECT_EQ(entries(dir.path() / "elsewhere"), 0u);
  write_file_atomic(dir.path() / "iter_0000001" / "notes.txt", "a user's own link is followed");
  EXPECT_EQ(entries(dir.path() / "elsewhere"), 1u);
}

TEST(StagedFile, SameFileComparesDeviceAndInode) {
  ScratchDir dir("staged-same");
  const auto a = dir.write("a.txt", "x"), b = dir.write("b.txt", "x");
  fs::create_hard_link(a, dir.path() / "hard.txt");
  fs::create_symlink(a, dir.path() / "soft.txt");
  EXPECT_TRUE(same_file(a, dir.path() / "hard.txt"));
  EXPECT_TRUE(same_file(a, dir.path() / "soft.txt"));
  EXPECT_TRUE(same_file(a, dir.path() / "." / "a.txt"));
  EXPECT_FALSE(same_file(a, b));
  EXPECT_FALSE(same_file(a, dir.path() / "missing.txt"));
}

}  // namespace
}  // namespace ptdp
