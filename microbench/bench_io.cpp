// ptdp_bench_io: write and read bandwidth of a filesystem used as checkpoints
// use it, to fill a machine profile's "filesystem" figures. R threads (ranks)
// each write a shard of S bytes through a StagedFile (an exclusive temporary,
// fsync, rename into place, fsync of the folder: a checkpoint's atomic write); reads take the
// shards back after dropping them from the page cache (posix_fadvise
// DONTNEED once they are clean), each chunk checked against what was written
// (`wrong`: chunks that differ). GB/s: all ranks' bytes over the wall time.
//
// Options, before Google Benchmark's own (--benchmark_out=F.json
// --benchmark_out_format=json writes the JSON):
//   --dir PATH            folder to test (default: the current one)
//   --min-shard-kib N     smallest shard (default 1024: 1 MiB); sizes go up 16x a step
//   --max-shard-kib N     largest shard (default 262144: 256 MiB)
//   --max-ranks N         ranks 1, 2, 4, ... up to N (default 4)
//   --iterations N        at most N timed repetitions a point (default 10; fewer for big points)
// The context names the folder, its filesystem type and mount point.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/checkpoint/durable_file.h"
#include "core/io/staged_file.h"
#include "core/results/build_info.h"
#include "microbench/bench_setup.h"

namespace ptdp::bench {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kChunk = 4 * kKiB * kKiB;              // bytes per write() or read() call
constexpr std::int64_t kBytesPerPoint = 256 * kKiB * kKiB;    // iterations fill about this much

struct IoOptions {
  std::filesystem::path dir = ".";
  std::int64_t min_shard_kib = 1024, max_shard_kib = 256 * 1024;
  int max_ranks = 4, iterations = 10;
};

IoOptions take_io_options(int& argc, char** argv) {
  IoOptions o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (auto d = value_of("--dir", i, argc, argv)) o.dir = *d;
    else if (auto lo = value_of("--min-shard-kib", i, argc, argv)) o.min_shard_kib = std::atoll(lo->c_str());
    else if (auto hi = value_of("--max-shard-kib", i, argc, argv)) o.max_shard_kib = std::atoll(hi->c_str());
    else if (auto r = value_of("--max-ranks", i, argc, argv)) o.max_ranks = std::atoi(r->c_str());
    else if (auto n = value_of("--iterations", i, argc, argv)) o.iterations = std::atoi(n->c_str());
    else argv[out++] = argv[i];
  }
  argc = out;
  if (!std::filesystem::is_directory(o.dir)) refuse("--dir " + o.dir.string() + " is not a folder");
  if (o.min_shard_kib < 1 || o.max_shard_kib < o.min_shard_kib || o.max_shard_kib > 64 * kKiB * kKiB)
    refuse("--min-shard-kib and --max-shard-kib must satisfy 1 <= min <= max <= 67108864 (64 GiB)");
  if (o.max_ranks < 1 || o.max_ranks > 1024) refuse("--max-ranks must be in [1, 1024]");
  if (o.iterations < 1) refuse("--iterations must be positive");
  o.dir = std::filesystem::canonical(o.dir);
  return o;
}

// What rank `rank` writes, chunk after chunk: bytes that depend on the rank.
std::vector<char> chunk_of(int rank, std::int64_t bytes) {
  std::vector<char> c(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<char>((i * 31 + static_cast<std::size_t>(rank) * 7) & 0xff);
  return c;
}

std::filesystem::path shard_path(const IoOptions& o, int rank) {
  return o.dir / ("ptdp-bench-io-" + std::to_string(::getpid()) + "-rank" + std::to_string(rank) + ".bin");
}

void check(bool ok, const std::string& what, const std::filesystem::path& path) {
  if (!ok) throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

void drop_cache(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  check(fd >= 0, "open", path);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// `shard` bytes of `chunk`s through a StagedFile, durably (fsync, rename, fsync
// of the folder): the checkpoint's own way of writing a shard.
void write_shard(const std::filesystem::path& path, const std::vector<char>& chunk, std::int64_t shard) {
  StagedFile out(path, {.durable = true});
  for (std::int64_t done = 0; done < shard;) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, shard - done));
    out.write(chunk.data(), n);
    done += static_cast<std::int64_t>(n);
  }
  out.commit();
  drop_cache(path);  // the pages are clean now: a later read goes to the device
}

// Reads the shard back; how many of its chunks differ from what was written.
std::int64_t read_shard(const std::filesystem::path& path, const std::vector<char>& chunk, std::int64_t shard) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  check(fd >= 0, "open", path);
  std::vector<char> buf(chunk.size());
  std::int64_t wrong = 0;
  for (std::int64_t done = 0; done < shard;) {
    const auto n = static_cast<std::size_t>(std::min<std::int64_t>(kChunk, shard - done));
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::read(fd, buf.data() + got, n - got);
      check(r > 0, "read", path);
      got += static_cast<std::size_t>(r);
    }
    wrong += std::memcmp(buf.data(), chunk.data(), n) != 0 ? 1 : 0;
    done += static_cast<std::int64_t>(n);
  }
  ::close(fd);
  return wrong;
}

// Runs fn(rank) on `ranks` threads at once; the wall time in seconds. The
// first failure is rethrown once all threads are done.
template <typename Fn>
double run_ranks(int ranks, const Fn& fn) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return s;
}

struct Point {
  IoOptions o;
  std::int64_t shard = 0;  // bytes a rank writes
  int ranks = 1;
};

void set_counters(benchmark::State& state, const Point& p, double bytes, double seconds, std::int64_t wrong) {
  state.counters["GB/s"] = seconds > 0 ? bytes / seconds / 1e9 : 0.0;
  state.counters["shard_bytes"] = static_cast<double>(p.shard);
  state.counters["ranks"] = p.ranks;
  state.counters["wrong"] = static_cast<double>(wrong);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}

void remove_shards(const Point& p) {
  for (int r = 0; r < p.ranks; ++r) std::filesystem::remove(shard_path(p.o, r));
}

void BM_Write(benchmark::State& state, const Point& p) {
  std::vector<std::vector<char>> chunks;
  for (int r = 0; r < p.ranks; ++r) chunks.push_back(chunk_of(r, std::min(kChunk, p.shard)));
  double bytes = 0, seconds = 0;
  try {
    for (auto _ : state) {
      const double s = run_ranks(p.ranks, [&](int r) { write_shard(shard_path(p.o, r), chunks[static_cast<std::size_t>(r)], p.shard); });
      state.SetIterationTime(s);
      bytes += static_cast<double>(p.shard) * p.ranks, seconds += s;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  remove_shards(p);
  set_counters(state, p, bytes, seconds, 0);
}

void BM_Read(benchmark::State& state, const Point& p) {
  std::vector<std::vector<char>> chunks;
  for (int r = 0; r < p.ranks; ++r) chunks.push_back(chunk_of(r, std::min(kChunk, p.shard)));
  double bytes = 0, seconds = 0;
  std::atomic<std::int64_t> wrong{0};
  try {
    run_ranks(p.ranks, [&](int r) { write_shard(shard_path(p.o, r), chunks[static_cast<std::size_t>(r)], p.shard); });
    for (auto _ : state) {
      for (int r = 0; r < p.ranks; ++r) drop_cache(shard_path(p.o, r));
      const double s = run_ranks(p.ranks, [&](int r) {
        wrong += read_shard(shard_path(p.o, r), chunks[static_cast<std::size_t>(r)], p.shard);
      });
      state.SetIterationTime(s);
      bytes += static_cast<double>(p.shard) * p.ranks, seconds += s;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  remove_shards(p);
  set_counters(state, p, bytes, seconds, wrong.load());
}

void register_points(const IoOptions& o) {
  for (std::int64_t kib = o.min_shard_kib; kib <= o.max_shard_kib; kib *= 16)
    for (int ranks = 1; ranks <= o.max_ranks; ranks *= 2) {
      const Point p{o, kib * kKiB, ranks};
      const std::int64_t n = std::clamp<std::int64_t>(kBytesPerPoint / (p.shard * ranks), 1, o.iterations);
      const std::string args = "/shard_kib:" + std::to_string(kib) + "/ranks:" + std::to_string(ranks);
      benchmark::RegisterBenchmark(("write" + args).c_str(), BM_Write, p)->UseManualTime()->Iterations(n);
      benchmark::RegisterBenchmark(("read" + args).c_str(), BM_Read, p)->UseManualTime()->Iterations(n);
    }
}

}  // namespace
}  // namespace ptdp::bench

int main(int argc, char** argv) {
  const ptdp::bench::IoOptions o = ptdp::bench::take_io_options(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const ptdp::FilesystemInfo fs = ptdp::filesystem_of(o.dir);
  benchmark::AddCustomContext("ptdp_io_dir", o.dir.string());
  benchmark::AddCustomContext("ptdp_io_filesystem", fs.type);
  benchmark::AddCustomContext("ptdp_io_mount", fs.mount_point);
  benchmark::AddCustomContext("ptdp_io_method", "write: exclusive temporary, fsync, rename, fsync folder; read: after "
                                                "posix_fadvise(DONTNEED); 4 MiB calls; GB/s = all ranks' bytes / wall time");
  benchmark::AddCustomContext("ptdp_commit", ptdp::build_commit());
  ptdp::bench::register_points(o);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
