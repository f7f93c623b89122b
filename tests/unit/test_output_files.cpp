// Output files: a symbolic link, FIFO or folder is never replaced (its target
// untouched), an unwritable folder is named, several outputs are committed all
// or none, and no temporary file is left on any path.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "core/results/output_files.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

const nlohmann::json kDoc = {{"schema", "test"}, {"value", 1}};

// Names in `dir` other than `keep`: a temporary or probe left behind would show here.
std::vector<std::string> leftovers(const fs::path& dir, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (std::find(keep.begin(), keep.end(), e.path().filename().string()) == keep.end())
      out.push_back(e.path().filename().string());
  return out;
}

std::string error_of_write(const fs::path& path) {
  try {
    write_json_atomic(path, kDoc);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(written)";
}

TEST(OutputFiles, WritesANewPathAndReplacesARegularFile) {
  ScratchDir dir("out-ok");
  EXPECT_EQ(output_path_problem(dir.path() / "new" / "sub" / "r.json"), "");
  write_json_atomic(dir.path() / "new" / "sub" / "r.json", kDoc);
  EXPECT_EQ(nlohmann::json::parse(test::read_file(dir.path() / "new" / "sub" / "r.json")), kDoc);
  const auto old = dir.write("r.json", "old");
  EXPECT_EQ(output_path_problem(old), "");
  write_json_atomic(old, kDoc);
  EXPECT_EQ(nlohmann::json::parse(test::read_file(old)), kDoc);
  EXPECT_EQ(leftovers(dir.path(), {"new", "r.json"}), std::vector<std::string>{});
}

TEST(OutputFiles, ASymbolicLinkIsRefusedAndItsTargetUntouched) {
  ScratchDir dir("out-link");
  const auto target = dir.write("target.txt", "precious");
  fs::create_symlink(target, dir.path() / "link.json");
  EXPECT_NE(output_path_problem(dir.path() / "link.json").find("is a symbolic link"), std::string::npos);
  EXPECT_NE(error_of_write(dir.path() / "link.json").find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(test::read_file(target), "precious");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  fs::create_symlink(dir.path() / "nowhere", dir.path() / "dangling.json");  // a dangling link is refused too
  EXPECT_NE(error_of_write(dir.path() / "dangling.json").find("is a symbolic link"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "nowhere"));
  EXPECT_EQ(leftovers(dir.path(), {"target.txt", "link.json", "dangling.json"}), std::vector<std::string>{});
}

TEST(OutputFiles, AFifoAFolderAndADeviceAreRefused) {
  ScratchDir dir("out-fifo");
  const auto fifo = dir.path() / "pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(output_path_problem(fifo).find("is a FIFO"), std::string::npos);
  EXPECT_NE(error_of_write(fifo).find("is a FIFO"), std::string::npos);  // refused without opening it (no block)
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::create_directories(dir.path() / "folder.json");
  EXPECT_NE(error_of_write(dir.path() / "folder.json").find("is a folder"), std::string::npos);
  EXPECT_NE(output_path_problem("/dev/null").find("is a device"), std::string::npos);
  EXPECT_EQ(leftovers(dir.path(), {"pipe.json", "folder.json"}), std::vector<std::string>{});
}

TEST(OutputFiles, AnUnwritableFolderIsNamed) {
  ScratchDir dir("out-folder");
  const auto file = dir.write("plain.txt", "x");
  EXPECT_NE(output_path_problem(file / "r.json").find("plain.txt is not a folder"), std::string::npos);
  EXPECT_NE(output_path_problem(file / "deeper" / "r.json").find("plain.txt is not a folder"), std::string::npos);
  // procfs takes no new files, even from root.
  EXPECT_NE(output_path_problem("/proc/ptdp-test/r.json").find("cannot create files in /proc"), std::string::npos);
  EXPECT_EQ(leftovers(dir.path(), {"plain.txt"}), std::vector<std::string>{});
}

TEST(OutputFiles, SeveralOutputsAreCommittedAllOrNone) {
  ScratchDir dir("out-set");
  {  // the second add fails: the first's temporary goes, nothing is written
    OutputFiles files;
    files.add(dir.path() / "a.json", kDoc);
    fs::create_directories(dir.path() / "b.json");
    EXPECT_THROW(files.add(dir.path() / "b.json", kDoc), std::runtime_error);
    files.commit();  // a failed set has nothing left to commit
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a.json"));
  fs::remove(dir.path() / "b.json");
  {  // a folder put in place after staging: refused at commit, before anything is renamed
    OutputFiles files;
    files.add(dir.path() / "a.json", kDoc);
    files.add(dir.path() / "c.json", kDoc);
    fs::create_directories(dir.path() / "c.json" / "inside");
    EXPECT_THROW(files.commit(), std::runtime_error);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a.json"));
  {  // destroyed without commit: nothing
    OutputFiles files;
    files.add(dir.path() / "a.json", kDoc);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "a.json"));
  EXPECT_EQ(leftovers(dir.path(), {"c.json"}), std::vector<std::string>{});
  OutputFiles files;
  files.add(dir.path() / "a.json", kDoc);
  files.add(dir.path() / "d.json", kDoc, -1);
  files.commit();
  EXPECT_EQ(test::read_file(dir.path() / "d.json"), kDoc.dump() + "\n");
  EXPECT_EQ(leftovers(dir.path(), {"a.json", "c.json", "d.json"}), std::vector<std::string>{});
}

// A process killed while writing leaves `.NAME.tmp.PID`; the next write of NAME
// removes it, and keeps a temporary whose process still lives.
TEST(OutputFiles, TheNextWriteRemovesADeadProcesssTemporary) {
  ScratchDir dir("out-stale");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);  // `child` is now a pid no process has
  const std::string dead = ".r.json.tmp." + std::to_string(child), live = ".r.json.tmp." + std::to_string(::getppid());
  dir.write(dead, "{\"half\": ");
  dir.write(live, "{\"half\": ");
  write_json_atomic(dir.path() / "r.json", kDoc);
  EXPECT_EQ(leftovers(dir.path(), {"r.json", live}), std::vector<std::string>{});
}

}  // namespace
}  // namespace ptdp
