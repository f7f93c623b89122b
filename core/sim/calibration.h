// A calibration table: measured per-op costs of one machine (from ptdp's
// microbenchmarks, `ptdp calibrate`), which the cost model prefers to its
// analytical curves. A GEMM's analytical time is scaled by measured/analytical
// at the nearest measured shape (distance in log m, n, k, batch).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/topology/collective.h"
#include "core/sim/device_rates.h"

namespace ptdp {

inline constexpr const char* kCalibrationSchema = "ptdp.calibration/1";

struct GemmSample {
  GemmShape shape;
  double seconds = 0;
};

// α–β of a collective on one link class: time = alpha + bytes·factor/busbw.
struct CollectiveRate {
  double alpha_us = 0;
  double busbw_gbs = 0;
};

struct Calibration {
  std::string name;                    // file stem, named in projections made with it
  std::string machine;                 // profile it calibrates
  std::string source;                  // what was measured, where, when
  std::string precision = "bf16";      // element type of the GEMM samples
  double memory_bandwidth_gbs = 0;     // achieved by element-wise kernels (0: not measured)
  double flash_attention_tflops = 0;   // achieved by fused attention (0: not measured)
  std::vector<GemmSample> gemms;       // measured GEMMs
  std::map<std::string, CollectiveRate> collectives;  // "intra_node.all_reduce", "inter_node.all_gather", ...
  // Ranks that share one host's cores, caches and memory (a CPU run: ranks per
  // node) -> the per-rank slowdown of compute they measured running at once.
  // Empty on a GPU calibration, where each rank has its own device.
  std::map<int, double> host_sharing;

  // Reads "ptdp.calibration/1" JSON; JsonRefused (a std::runtime_error) naming
  // the file, pointer and rule when malformed: a time that is not finite,
  // positive and normal, a rate beyond bounds, no machine named, or no
  // measurement at all.
  static Calibration load(const std::filesystem::path& file);
  static Calibration from_json(const nlohmann::json& j, const std::string& where);
  nlohmann::json to_json() const;

  // Why this table cannot price plans on machine profile `profile`, or "": it measured another machine.
  std::string machine_mismatch(const std::string& profile) const;

  // measured / analytical time at the measured shape nearest to g; 1 without samples.
  double gemm_time_ratio(const GemmShape& g, const DeviceRates& rates) const;
  // Slowdown of compute when `ranks` share the host: the entry for the largest
  // measured count not above `ranks`; 1 for one rank or without entries.
  double host_sharing_at(int ranks) const;
  // Measured collective rate, or null when absent.
  const CollectiveRate* collective(Collective c, bool intra_node) const;
};

// "intra_node.<collective_name>" or "inter_node.<collective_name>": the key of a measured rate.
std::string collective_key(Collective c, bool intra_node);

}  // namespace ptdp
