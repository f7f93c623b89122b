// GoogleTest under mpirun: every rank runs every test in the same order (tests
// are collective); rank 0 prints the usual report, other ranks print only their
// failures, prefixed with the rank, and each test fails on rank 0 when it failed
// on any rank.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/comm/world.h"
#include "tests/mpi/mpi_env.h"

namespace {

// Prints failed assertions of a non-zero rank.
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?", r.line_number(),
                   r.summary());
  }

 private:
  int rank_;
};

// After each test, a failure on any rank becomes a failure on rank 0.
class AnyRankFailed : public testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const testing::TestInfo& info) override {
    auto& world = ptdp::test::mpi_world();
    const double failed = world.all_reduce_host(info.result()->Failed() ? 1.0 : 0.0, ptdp::ReduceOp::sum);
    if (world.rank() == 0 && failed > 0 && !info.result()->Failed())
      std::fprintf(stderr, "[rank 0] %s.%s failed on %g other rank(s); see their messages above\n",
                   info.test_suite_name(), info.name(), failed);
    any_ = any_ || failed > 0;
  }
  bool any() const { return any_; }

 private:
  bool any_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  ptdp::WorldSession session(60.0);
  ptdp::test::set_mpi_world(&session.world());
  const int rank = session.world().rank();
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  auto* gate = new AnyRankFailed;
  listeners.Append(gate);
  const int rc = RUN_ALL_TESTS();
  return rc != 0 || gate->any() ? 1 : 0;
}
