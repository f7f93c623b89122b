// ptdp_bench_collectives (run with mpirun): every collective of the
// Communicator interface (MPI on --device cpu, NCCL on --device cuda) from 8 B
// to --max-bytes in powers of 4, plus the exact messages a config issues
// (--config: tensor-parallel all-reduce, pipeline send/recv, data-parallel
// gradient all-reduce, tied-embedding all-reduce). Time = the slowest rank's;
// algbw and busbw by nccl-tests' definitions; every timed run is checked
// exactly afterwards (integer-valued fp32 inputs: 0 ulps) into `wrong`.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "core/accounting/bus_bandwidth.h"
#include "core/accounting/memory_model.h"
#include "core/comm/placement.h"
#include "core/comm/world.h"
#include "core/config/rank_dims.h"
#include "microbench/bench_setup.h"

namespace ptdp::bench {
namespace {

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Ranks of the world that share this process's node (by host name; collective).
int ranks_per_node(Communicator& host, const ProcessPlace& here) {
  const std::vector<RankPlace> places = gather_placement(host, here.host);
  const auto same_host = [&](const RankPlace& p) { return p.host == here.host; };
  return static_cast<int>(std::count_if(places.begin(), places.end(), same_host));
}

class Suite {
 public:
  Suite(Backend& b, Communicator& host, Communicator& comm) : b_(b), host_(host), comm_(comm) {}

  void add(Collective c, std::int64_t bytes, const std::string& tag) {
    const std::string name = "collective/" + collective_name(c) + (tag.empty() ? "" : "/" + tag);
    benchmark::RegisterBenchmark(name.c_str(), [this, c](benchmark::State& st) { run(st, c, st.range(0)); })
        ->Args({bytes})->ArgNames({"bytes"})->UseManualTime()->Unit(benchmark::kMicrosecond);
  }

 private:
  // Buffers of `count` fp32 elements in and `count·out_factor` out, filled with small integers.
  void run(benchmark::State& st, Collective c, std::int64_t bytes) {
    const int n = comm_.size(), r = comm_.rank();
    const std::int64_t count = std::max<std::int64_t>(1, bytes / 4);
    const std::int64_t per = c == Collective::all_gather || c == Collective::reduce_scatter ? count / n : count;
    if (per < 1) return st.SkipWithError("message smaller than one element per rank");
    Ops& ops = *b_.ops;
    Tensor in = ops.empty({c == Collective::all_gather ? per : count}, DType::f32);
    Tensor out = ops.empty({c == Collective::reduce_scatter ? per : count}, DType::f32);
    double wrong = 0;
    for (auto _ : st) {
      fill(in, r);
      comm_.barrier();
      ops.reset_marks(2);
      ops.record_mark(0);
      issue(c, in, out, per);
      ops.record_mark(1);
      ops.synchronize();
      st.SetIterationTime(host_.all_reduce_host(ops.mark_seconds(1), ReduceOp::max));
      wrong += check(c, in, out, per);  // outside the timed region
    }
    // Rates over the manual time: GB per second.
    using benchmark::Counter;
    const double moved = 4.0 * static_cast<double>(c == Collective::all_gather || c == Collective::reduce_scatter ? per * n : count);
    st.counters["algbw_gbs"] = Counter(moved / 1e9, Counter::kIsIterationInvariantRate);
    st.counters["busbw_gbs"] = Counter(moved * bus_factor(c, n) / 1e9, Counter::kIsIterationInvariantRate);
    st.counters["wrong"] = host_.all_reduce_host(wrong, ReduceOp::sum);
    st.counters["bytes"] = moved, st.counters["ranks"] = n, st.counters["bus_factor"] = bus_factor(c, n);
    st.counters["ranks_per_node"] = per_node_;
    st.SetLabel(collective_name(c));
  }

  void fill(Tensor& t, int rank) {
    std::vector<float> v(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((rank + 1 + i) % 7);
    b_.ops->upload_f32(v.data(), t);
  }

  void issue(Collective c, Tensor& in, Tensor& out, std::int64_t per) {
    const int n = comm_.size(), r = comm_.rank();
    switch (c) {
      case Collective::all_reduce: comm_.all_reduce(in.raw(), in.numel(), DType::f32, ReduceOp::sum); break;
      case Collective::all_gather: comm_.all_gather(in.raw(), out.raw(), per, DType::f32); break;
      case Collective::reduce_scatter: comm_.reduce_scatter(in.raw(), out.raw(), per, DType::f32, ReduceOp::sum); break;
      case Collective::broadcast: comm_.broadcast(in.raw(), in.numel(), DType::f32, 0); break;
      case Collective::send_recv: {  // pairs (0,1), (2,3), ...; an odd last rank sits out
        const int peer = r ^ 1;
        if (peer >= n) break;
        auto recv = comm_.irecv(out.raw(), out.numel(), DType::f32, peer, 7);
        auto send = comm_.isend(in.raw(), in.numel(), DType::f32, peer, 7);
        recv->wait();
        send->wait();
        break;
      }
    }
  }

  // Elements that differ from the exact expected result.
  double check(Collective c, const Tensor& in, const Tensor& out, std::int64_t per) {
    const int n = comm_.size(), r = comm_.rank();
    const Tensor& result = c == Collective::all_reduce || c == Collective::broadcast ? in : out;
    std::vector<float> got(static_cast<std::size_t>(result.numel()));
    b_.ops->download_f32(result, got.data());
    double wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      double expect = 0;
      const auto v = [&](int rank, std::size_t j) { return static_cast<double>((rank + 1 + j) % 7); };
      switch (c) {
        case Collective::all_reduce: for (int q = 0; q < n; ++q) expect += v(q, i); break;
        case Collective::all_gather: expect = v(static_cast<int>(i / static_cast<std::size_t>(per)), i % static_cast<std::size_t>(per)); break;
        case Collective::reduce_scatter: for (int q = 0; q < n; ++q) expect += v(q, static_cast<std::size_t>(r * per) + i); break;
        case Collective::broadcast: expect = v(0, i); break;
        case Collective::send_recv: expect = (r ^ 1) < n ? v(r ^ 1, i) : got[i]; break;
      }
      wrong += got[i] == expect ? 0 : 1;
    }
    return wrong;
  }

  Backend& b_;
  Communicator& host_;
  Communicator& comm_;

 public:
  int per_node_ = 1;
};

// The messages one rank of `cfg` sends: b·s·h activations (1/t with scatter/gather), gradients.
void add_config_sizes(Suite& s, const Config& cfg) {
  const RankDims r(cfg.model, cfg.plan);
  const std::int64_t activation = r.e * r.n * r.h;
  s.add(Collective::all_reduce, activation, "config_tp");
  s.add(Collective::send_recv, cfg.plan.scatter_gather ? activation / r.t : activation, "config_pp");
  s.add(Collective::all_reduce, 4 * rank_parameter_count(cfg.model, cfg.plan, r, 0), "config_dp");
  s.add(Collective::all_reduce, 4 * r.vt * r.h, "config_tied");
}

}  // namespace
}  // namespace ptdp::bench

int main(int argc, char** argv) {
  using namespace ptdp;
  WorldSession session(120);
  Communicator& host = session.world();
  const bench::Options o = bench::take_options(argc, argv);
  const Config cfg = bench::shapes_config(o);
  if (host.rank() != 0)  // only rank 0 writes outputs
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]).rfind("--benchmark_out", 0) == 0) argv[i] = const_cast<char*>("--benchmark_color=false");
  benchmark::Initialize(&argc, argv);
  const ProcessPlace here = this_process();
  Backend backend = make_backend(o.device, cfg, host, here, 120);
  Communicator& comm = backend.device_world ? *backend.device_world : host;
  bench::add_context(o, cfg, backend.info, session.library_version());
  bench::Suite suite(backend, host, comm);
  suite.per_node_ = bench::ranks_per_node(host, here);
  for (const Collective c : kCollectives)
    for (std::int64_t bytes = 8; bytes <= o.max_bytes; bytes *= 4) suite.add(c, bytes, "");
  if (!o.config.empty()) bench::add_config_sizes(suite, cfg);
  if (host.rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    bench::NullReporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  return 0;
}
