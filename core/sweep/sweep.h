// Sweeps: one JSON file per experiment, expanded into points. A sweep names the
// experiment it reproduces, a base config, the axes it varies (crossed; keys in
// one axis object are zipped) and/or explicit points, the choices the paper
// leaves unstated and how they are chosen (fixed in the base, or searched), how
// each point finds its published value, and optional acceptance bands.
//
//   {"schema": "ptdp.sweep/1", "name": "figure13", "reproduces": "Figure 13 ...",
//    "reference": "figure13_tensor_vs_pipeline", "machine": "a100-80gb", "mode": "project",
//    "base": {"model": {...}, "plan": {...}},
//    "axes": [{"plan.global_batch": [32, 128]}, {"plan.pp": [2, 4], "plan.tp": [32, 16]}],
//    "points": [{"model.layers": 24, ...}, ...],
//    "search": {"plan.micro_batch": [1, 2, 4, 8], "plan.virtual_stages": [2, 4, 8]},
//    "paper": {"metric": "model_tflops_per_gpu", "pointer": "/series/batch_size_{plan.global_batch}/({plan.pp},{plan.tp})",
//              "series": "batch {plan.global_batch}", "label": "({plan.pp},{plan.tp})"},
//    "expect": {"model_tflops_per_gpu": {"min": 100}}, "train": {"iterations": 10, "warmup": 2}}
//
// Templates "{plan.pp}" take the point's resolved value; "{point}" its index;
// "{tag.series}" a value of a "tag.*" axis key (labels that are not config fields).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"
#include "core/results/result.h"

namespace ptdp {

inline constexpr const char* kSweepSchema = "ptdp.sweep/1";

struct SweepPoint {
  int index = 0;
  nlohmann::json overrides;     // dotted key -> value, as expanded
  nlohmann::json tags;          // "tag.*" axis values: labels for reports, not config fields
  nlohmann::json config_json;   // base with the overrides applied
  Config config;                // valid when errors is empty
  ConfigErrors errors;          // why the point is refused (listed and skipped, never run)
  std::string series, label;    // for reports: which curve, which x
  std::optional<double> paper;  // the published value, when the sweep has a reference
  nlohmann::json expect;        // acceptance bands {"metric": {"min": x, "max": y}}
};

// How a sweep runs its points: train each, project each, or measure what this
// machine can hold and project the rest. JSON and --mode spell it measure | project | auto.
enum class SweepMode : std::uint8_t { measure, project, automatic };
std::string to_string(SweepMode m);
std::optional<SweepMode> sweep_mode_from_string(const std::string& text);

struct Sweep {
  std::filesystem::path file;
  std::string name, reproduces, reference, machine, note;
  SweepMode mode = SweepMode::project;
  std::string metric = "model_tflops_per_gpu";  // what the paper's values measure
  std::vector<int> search_micro_batches;        // empty: fixed by the base or the point
  std::vector<int> search_virtual_stages;       // empty: fixed
  bool search_split = false;                    // also search the t/p split
  int train_iterations = 10;                    // measured points: "train": {"iterations", "warmup"}
  int train_warmup = 2;
  std::vector<SweepPoint> points;

  int valid_points() const;
};

// Thrown when the sweep file itself is malformed: every problem, each naming
// the file and the field ("sweeps/figure13.json: axes[1]: ...").
class SweepRefused : public std::runtime_error {
 public:
  explicit SweepRefused(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// The most points a sweep may expand to unless `ptdp sweep --max-points` says
// otherwise: every point is a process of its own and a line of the results.
inline constexpr std::int64_t kDefaultMaxSweepPoints = 5000;

// Reads and expands a sweep. `reference` is the paper's experiments object
// (report/reference/megatron-sc21.json "experiments"), used to look up each
// point's published value; null skips the lookup. A sweep of more than
// `max_points` points (its points times its crossed axes, counted before
// anything is expanded) is refused.
Sweep load_sweep(const std::filesystem::path& file, const std::filesystem::path& machines_dir,
                 const nlohmann::json* reference, std::int64_t max_points = kDefaultMaxSweepPoints);

// Every published experiment shipped with the project: the paper's
// (report/reference/megatron-sc21.json) and the modern set's sources
// (report/reference/modern-runs.json), one "experiments" object.
nlohmann::json load_reference_experiments();
// The "experiments" object of a reference document (report/reference/*.json); {} when the file is absent.
nlohmann::json load_reference_experiments(const std::filesystem::path& file);

// "{plan.pp}"-style templates filled from a config JSON (and {"tag": {...}}); {point} is `index`.
std::string fill_template(const std::string& text, const nlohmann::json& config, int index);

}  // namespace ptdp
