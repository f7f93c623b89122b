// Options, default shapes and the context of ptdp's benchmark programs.
#include "microbench/bench_setup.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "core/config/data_root.h"
#include "core/results/build_info.h"

namespace ptdp::bench {

std::optional<std::string> value_of(const char* name, int& i, int argc, char** argv) {
  const std::size_t len = std::strlen(name);
  if (std::strncmp(argv[i], name, len) != 0) return std::nullopt;
  if (argv[i][len] == '=') return std::string(argv[i] + len + 1);
  if (argv[i][len] == '\0' && i + 1 < argc) return std::string(argv[++i]);
  return std::nullopt;
}

void refuse(const std::string& why) {
  std::fprintf(stderr, "ptdp benchmark: %s\n", why.c_str());
  std::exit(2);
}

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

Options take_options(int& argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (auto v = value_of("--device", i, argc, argv)) {
      if (const auto d = device_from_name(*v)) o.device = *d;
      else refuse("--device=" + *v + " is not a device (cpu or cuda)");
    }
    else if (auto c = value_of("--config", i, argc, argv)) o.config = *c;
    else if (auto m = value_of("--machine", i, argc, argv)) o.machine = *m;
    else if (auto b = value_of("--max-bytes", i, argc, argv)) o.max_bytes = std::atoll(b->c_str());
    else if (auto n = value_of("--concurrent", i, argc, argv)) o.concurrent = std::atoi(n->c_str());
    else argv[out++] = argv[i];
  }
  argc = out;
  if (const std::string why = device_unavailable(o.device); !why.empty()) refuse("--device=" + device_name(o.device) + ": " + why);
  if (o.max_bytes < 8) refuse("--max-bytes must be at least 8");
  if (o.concurrent < 1) refuse("--concurrent must be a positive count of copies");
  try {
    (void)data_root();  // a PTDP_DATA_DIR that holds no data is refused before any work
  } catch (const std::invalid_argument& e) {
    refuse(e.what());
  }
  return o;
}

Config shapes_config(const Options& o) {
  Config c;
  try {
    if (!o.config.empty()) {
      c = load_config(o.config, default_machines_dir());
      const ConfigErrors errors = validate(c);
      if (!errors.empty()) refuse(errors.front().field + ": " + errors.front().message);
    } else if (o.device == Device::cpu) {
      c.model = {2, 256, 4, 128, 1024, 0, 0};
      c.plan.micro_batch = 2, c.plan.global_batch = 2, c.plan.precision = Precision::fp32;
      c.machine = load_machine("cpu-host", default_machines_dir());
    } else {
      c.model = {24, 2048, 16, 2048, 51200, 0, 0};
      c.plan.micro_batch = 1, c.plan.global_batch = 1, c.plan.precision = Precision::bf16;
      c.plan.attention = attention_unavailable(Device::cuda, Attention::flash).empty() ? Attention::flash : Attention::unfused;
      c.machine = load_machine("h100-80gb", default_machines_dir());
    }
    if (!o.machine.empty()) c.machine = load_machine(o.machine, default_machines_dir());
  } catch (const ConfigRefused& e) {
    refuse(e.errors().front().field + ": " + e.errors().front().message);
  }
  if (o.device == Device::cpu) c.plan.precision = Precision::fp32;  // the CPU backend is fp32
  if (o.device == Device::cuda && c.plan.precision == Precision::fp32) c.plan.precision = Precision::bf16;
  const std::int64_t head_dim = c.model.heads > 0 ? c.model.hidden / c.model.heads : 0;
  if (const std::string why = attention_unavailable(o.device, c.plan.attention, head_dim);
      o.device == Device::cuda && !why.empty())
    refuse("plan.attention: " + why);
  return c;
}

double peak_flops(const Config& cfg) { return cfg.machine.peak_for(to_string(cfg.plan.precision)) * 1e12; }

void add_context(const Options& o, const Config& cfg, const nlohmann::json& info, const std::string& mpi) {
  benchmark::AddCustomContext("ptdp_device", device_name(o.device));
  benchmark::AddCustomContext("ptdp_hardware", o.device == Device::cuda ? info.value("gpu", "?") : cpu_model());
  for (const char* key : {"driver", "cuda_runtime", "cublaslt", "nccl"})
    if (info.contains(key)) benchmark::AddCustomContext(std::string("ptdp_") + key, info[key].get<std::string>());
  benchmark::AddCustomContext("ptdp_mpi", mpi);
  // Copies of the program that ran at once on this host: `ptdp calibrate`
  // compares them with a lone run to price ranks that share a CPU host.
  benchmark::AddCustomContext("ptdp_concurrent", std::to_string(o.concurrent));
  benchmark::AddCustomContext("ptdp_commit", build_commit());
  benchmark::AddCustomContext("ptdp_machine", cfg.machine.name);
  benchmark::AddCustomContext("ptdp_precision", to_string(cfg.plan.precision));
  benchmark::AddCustomContext("ptdp_peak_tflops", std::to_string(cfg.machine.peak_for(to_string(cfg.plan.precision))));
  benchmark::AddCustomContext("ptdp_shapes", nlohmann::json{{"model", to_json(cfg.model)}, {"plan", to_json(cfg.plan)}}.dump());
}

}  // namespace ptdp::bench
