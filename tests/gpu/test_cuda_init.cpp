// Parameter initialisation on the device (init.cu) against the CPU's: the
// same Philox/Box-Muller function, so the bf16 values on the GPU are the CPU's
// fp32 values rounded to bf16. Skipped without a GPU.
#include "core/kernels/cpu/cpu_ops.h"
#include "core/kernels/cuda/cuda_ops.h"
#include "core/model/param.h"
#include "tests/gpu/gpu_test.h"

namespace ptdp {
namespace {

std::vector<float> values(Ops& ops, const Param& p) {
  std::vector<float> v(static_cast<std::size_t>(p.value.numel()));
  ops.download_f32(p.value, v.data());
  return v;
}

// The device computes Box-Muller in double with its own log/cos (≤ 1-2 ulp of
// double from the host's), then rounds to float and to bf16: the two results
// differ only when the double lands within a few ulp of a rounding boundary
// (probability ~1e-13 per element). Every element must be equal.
TEST(CudaInit, DeviceInitEqualsTheCpuInitRoundedToBf16) {
  PTDP_REQUIRE_GPU();
  CpuAllocator cpu_alloc;
  CpuOps cpu(cpu_alloc);
  CudaPoolAllocator gpu_alloc(0);
  CudaOps gpu(gpu_alloc, {DType::bf16, true, Attention::flash, 60});
  const Shape full{384, 200};
  for (int dim : {-1, 0, 1}) {
    for (int rank = 0; rank < (dim < 0 ? 1 : 2); ++rank) {
      const ShardSpec shard{dim, dim < 0 ? 1 : 2, rank};
      const auto ref = make_param(cpu, "layers.0.fc1.weight", full, shard, Init::normal, 0.02f, 99, true);
      const auto got = make_param(gpu, "layers.0.fc1.weight", full, shard, Init::normal, 0.02f, 99, true);
      const std::vector<float> r = values(cpu, *ref), g = values(gpu, *got);
      ASSERT_EQ(g.size(), r.size());
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < r.size(); ++i)
        if (g[i] != gputest::round_to<__nv_bfloat16>(r[i]) && bad++ == 0) first = i;
      EXPECT_EQ(bad, 0u) << "dim " << dim << " rank " << rank << ": first at " << first << ": gpu " << g[first]
                         << ", cpu " << r[first];
    }
  }
  const auto ones = make_param(gpu, "ln.weight", {77}, {}, Init::ones, 0, 99, false);
  EXPECT_EQ(values(gpu, *ones), std::vector<float>(77, 1.0f));
}

}  // namespace
}  // namespace ptdp
