// A p = 2 1F1B pipeline on one GPU: two threads, each rank with its own
// CudaPoolAllocator + CudaOps (bf16, unfused attention: no cuDNN needed), over
// the device mode of the in-process communicator, trained through the Trainer
// as the CPU pair test does. Compared with a single-rank CUDA run of the same
// config and with the fp32 CPU run. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "core/comm/in_process_device.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "tests/cpu_training_util.h"
#include "tests/equivalence_config.h"
#include "tests/gpu/gpu_test.h"
#include "tests/pipeline_pair_util.h"

namespace ptdp {
namespace {

constexpr int kIterations = 3;
constexpr double kTimeoutS = 120;  // a rank stuck on its peer fails the test instead of hanging it

// bf16, unfused attention, deterministic: cuBLASLt takes the heuristic's first
// algorithm (no timed choice that could differ between the two runs) and no
// reduction uses floating-point atomics, so equal inputs give equal bits.
Config gpu_config(int pp) {
  Config cfg = test::equivalence_config();
  cfg.plan.precision = Precision::bf16;
  cfg.plan.attention = Attention::unfused;
  cfg.plan.deterministic = true;
  cfg.plan.pp = pp;
  cfg.plan.schedule = "1f1b";
  return cfg;
}

std::vector<double> run_gpu_ranks(const Config& cfg, InProcessLog* log = nullptr) {
  auto world = make_in_process_device_world(test::plan_topology(cfg).world(), kTimeoutS, log);
  return test::run_rank_threads(world, [&](int r, Communicator& comm) {
    CudaPoolAllocator alloc(r, kTimeoutS);
    CudaOps ops(alloc, cuda_ops_options(cfg.plan, kTimeoutS));
    set_in_process_stream(comm, ops.stream());  // before the groups are split: they inherit it
    return test::train_rank(cfg, ops, comm, kIterations);
  });
}

// Pair against single-rank CUDA. Iteration 0's loss comes from the initial
// weights (same Philox init on both layouts), the same deterministic kernels
// on the same shapes, and a pipeline boundary that moves the bf16 activation
// by bitwise copies; the last stage sums the same micro-batch losses in the
// same order and the world adds rank 0's exact 0.0: bitwise equal. Later
// iterations differ only through accumulation order: the tied word embedding's
// fp32 gradient is (Σ embedding parts) + (Σ head parts) over the two stages
// instead of one interleaved sum (relative ~1e-7 of a gradient element), and
// the gradient norm's squares are summed per stage. Through Adam that moves a
// master weight by ~lr·1e-7, which flips its bf16 copy by one ulp (2^-8
// relative) only where it sits that close to a rounding boundary (a handful of
// weights at most); one flipped weight of ~2·10^5 moves the loss by far less
// than 1e-4 relative. A wrong or unordered transfer (stale or racing boundary
// activation or gradient, a wrong micro-batch) changes the loss by percents.
constexpr double kPairVsSingle = 1e-4;
// Against the fp32 CPU run: as CudaTraining.ASmallGptOnOneGpuMatchesTheCpuBackend
// (tests/gpu/test_cuda_ops.cpp), bf16 roundings move the loss by a few u16
// (2^-8) relative per iteration; 3% bounds 3 iterations with margin.
constexpr double kGpuVsCpu = 0.03;

TEST(PipelinePairGpu, OneF1BOnOneGpuReproducesTheSingleRankLosses) {
  PTDP_REQUIRE_GPU();
  const Config pair = gpu_config(2);
  ASSERT_TRUE(validate(pair, 2).empty()) << validate(pair, 2).front().message;
  InProcessLog log;
  const std::vector<double> losses = run_gpu_ranks(pair, &log);
  const std::vector<double> single = run_gpu_ranks(gpu_config(1));
  Config cpu = test::equivalence_config();
  const std::vector<double> reference = test::cpu_train_losses(cpu, kIterations);
  ASSERT_EQ(losses.size(), static_cast<std::size_t>(kIterations));
  ASSERT_EQ(single.size(), losses.size());
  EXPECT_EQ(losses[0], single[0]) << "iteration 0 (before any update) must be bitwise equal";
  for (std::size_t i = 0; i < losses.size(); ++i) {
    EXPECT_NEAR(losses[i], single[i], kPairVsSingle * std::abs(single[i])) << "iteration " << i;
    EXPECT_NEAR(losses[i], reference[i], kGpuVsCpu * std::abs(reference[i])) << "iteration " << i;
  }
  EXPECT_GT(log.groups.load(), 0);  // the transfer steps went out as groups
}

// t = 2 under sequence parallelism on one GPU, its collectives as rings
// (tp_comm_overlap) against the same plan with the plain all-gathers and
// reduce-scatters. The values are the same sums, but the GEMMs run on n/2 rows
// at a time, where cuBLASLt may choose another algorithm and round some bf16
// outputs one ulp (2^-8) apart; averaged over a micro-batch's tokens that moves
// the loss by well under 1e-3 relative in 3 iterations. A block GEMM'd before
// it arrived, or a partial sum added twice, moves it by percents.
constexpr double kRingVsPlain = 1e-3;

TEST(PipelinePairGpu, TensorParallelRingsMatchThePlainCollectives) {
  PTDP_REQUIRE_GPU();
  Config plain = gpu_config(1);
  plain.plan.tp = 2;
  plain.plan.sequence_parallel = true;
  Config ring = plain;
  ring.plan.tp_comm_overlap = true;
  ASSERT_TRUE(validate(ring, 2).empty()) << validate(ring, 2).front().message;
  const std::vector<double> with_rings = run_gpu_ranks(ring), without = run_gpu_ranks(plain);
  const std::vector<double> reference = test::cpu_train_losses(test::equivalence_config(), kIterations);
  ASSERT_EQ(with_rings.size(), without.size());
  for (std::size_t i = 0; i < with_rings.size(); ++i) {
    EXPECT_NEAR(with_rings[i], without[i], kRingVsPlain * std::abs(without[i])) << "iteration " << i;
    EXPECT_NEAR(with_rings[i], reference[i], kGpuVsCpu * std::abs(reference[i])) << "iteration " << i;
  }
}

// The device mode's own contract, on one GPU without a model: a message staged
// on the sender's stream arrives bitwise on the receiver's stream, in order per
// tag; a receive nobody sends gives up at its deadline.
TEST(InProcessDeviceCommunicator, MovesDeviceBuffersBetweenStreams) {
  PTDP_REQUIRE_GPU();
  auto world = make_in_process_device_world(2, 10);
  cudaStream_t s[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking), cudaSuccess);
    set_in_process_stream(*world[static_cast<std::size_t>(r)], s[r]);
  }
  const std::vector<float> a = {1, 2, 3}, b = {4, 5, 6};
  gputest::DeviceBuffer<float> da(a), db(b), got1(3), got2(3), nothing(1);  // NaN-poisoned
  world[0]->isend(da.get(), 3, DType::f32, 1, 5)->wait();
  world[0]->isend(db.get(), 3, DType::f32, 1, 5)->wait();
  // Overwritten after the staging copy on the sender's stream: the receive still sees a.
  ASSERT_EQ(cudaMemsetAsync(da.get(), 0, 3 * sizeof(float), s[0]), cudaSuccess);
  world[1]->irecv(got1.get(), 3, DType::f32, 0, 5)->order_before_use();
  world[1]->irecv(got2.get(), 3, DType::f32, 0, 5)->wait();
  EXPECT_EQ(got1.download(), a);
  EXPECT_EQ(got2.download(), b);
  auto short_world = make_in_process_device_world(2, 0.05);
  set_in_process_stream(*short_world[1], s[1]);
  EXPECT_THROW(short_world[1]->irecv(nothing.get(), 1, DType::f32, 0, 1)->wait(), std::runtime_error);
  for (cudaStream_t x : s) EXPECT_EQ(cudaStreamDestroy(x), cudaSuccess);
}

}  // namespace
}  // namespace ptdp
