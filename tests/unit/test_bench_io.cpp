// ptdp_bench_io runs briefly (64 KiB shards, one and two ranks, two
// repetitions) and writes a JSON with the filesystem it tested, a write and a
// read point per rank count, positive GB/s and no chunk read back wrong.
#include <gtest/gtest.h>

#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

#ifdef PTDP_BENCH_IO
TEST(BenchIo, WritesAndReadsShardsAndReportsTheFilesystem) {
  test::ScratchDir dir("bench-io");
  const auto r = test::run_command(std::string(PTDP_BENCH_IO) + " --dir . --min-shard-kib 64 --max-shard-kib 64"
                                       " --max-ranks 2 --iterations 2 --benchmark_out=io.json --benchmark_out_format=json",
                                   dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(dir.path() / "io.json"));
  EXPECT_NE(j["context"]["ptdp_io_filesystem"], "unknown");
  EXPECT_EQ(j["context"]["ptdp_io_dir"], std::filesystem::canonical(dir.path()).string());
  int writes = 0, reads = 0;
  for (const auto& run : j["benchmarks"]) {
    EXPECT_FALSE(run.value("error_occurred", false)) << run.dump();
    EXPECT_GT(run["GB/s"].get<double>(), 0) << run["name"];
    EXPECT_EQ(run["wrong"].get<double>(), 0) << run["name"];
    EXPECT_EQ(run["shard_bytes"].get<double>(), 64 * 1024) << run["name"];
    const std::string name = run["name"];
    writes += name.rfind("write/", 0) == 0 ? 1 : 0;
    reads += name.rfind("read/", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(writes, 2);  // ranks 1 and 2
  EXPECT_EQ(reads, 2);
  // Nothing left behind in the folder tested.
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().rfind("ptdp-bench-io-", 0), std::string::npos) << e.path();
}

TEST(BenchIo, RefusesAFolderThatIsNotThere) {
  test::ScratchDir dir("bench-io-bad");
  const auto r = test::run_command(std::string(PTDP_BENCH_IO) + " --dir ./missing", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--dir"), std::string::npos) << r.err;
}
#else
TEST(BenchIo, WritesAndReadsShardsAndReportsTheFilesystem) { GTEST_SKIP() << "ptdp_bench_io not built (no Google Benchmark)"; }
#endif

}  // namespace
}  // namespace ptdp
