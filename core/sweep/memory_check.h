// The memory validation set (issue 33): published per-GPU memory figures
// against ptdp's memory model (core/accounting/memory_model.h). The figures,
// their sources and what each covers are in report/reference/memory-runs.json;
// the configurations in sweeps/memory/*.json, one sweep per source, each point
// naming its run by tag.run. Each figure is compared with the same part of the
// model (its scope: model state, activations or both), never with the whole.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/accounting/memory_model.h"
#include "core/config/config.h"

namespace ptdp {

// What a published figure covers, of the most loaded GPU.
enum class MemoryScope : std::uint8_t {
  model_state_per_parameter,  // (weights + gradients + optimizer) / parameters of the (t, p) shard
  model_state,                // weights + gradients + optimizer, bytes
  activations,                // activation bytes at the peak
  total,                      // both, bytes
};
std::string to_string(MemoryScope s);
std::optional<MemoryScope> memory_scope_from_string(const std::string& text);

// One published figure (report/reference/memory-runs.json: experiments/<source>/runs/<id>).
struct MemoryRun {
  std::string source, id, where, published;
  MemoryScope scope = MemoryScope::total;
  double value = 0;       // in the scope's unit: bytes, or bytes per parameter
  std::string mechanism;  // why ptdp's model differs, where a known mechanism does ("" none)
  std::string pending;    // a mechanism the model lacks yet that the plan asks for ("" none)
};

// Every run of a reference document, by "<source>/<id>". Throws JsonRefused
// naming the file and the field: a run without a positive value, a known
// scope or its `where`.
std::map<std::string, MemoryRun> read_memory_reference(const std::filesystem::path& file);

std::filesystem::path memory_reference_file();              // report/reference/memory-runs.json
std::vector<std::filesystem::path> memory_sweep_files();    // sweeps/memory/*.json, sorted

// The model's figure for `scope` from the most loaded stage (the largest
// total): its breakdown, its partitioned state (state_bytes without ZeRO-2/3's
// transient units: what model-state figures count) and its parameter elements.
double modelled_memory(MemoryScope scope, const MemoryBreakdown& stage, const StateBytes& partitioned,
                       std::int64_t stage_parameters);
// The same for a configuration: its stages by memory_model() with Korthikanti
// et al.'s activations (the projections' formula), the most loaded one.
double modelled_memory(const Config& cfg, MemoryScope scope);

struct MemoryPointCheck {
  MemoryRun run;
  double modelled = 0;
  double error = 0;  // (modelled − published) / published
  nlohmann::json plan;
};

struct MemorySourceCheck {
  std::string name, reference, reproduces;
  std::vector<MemoryPointCheck> points;
  std::vector<std::string> refused;  // points whose plan breaks a rule (label: reason)
};

// Mean and max |error| over a set of points.
struct MemoryErrors {
  std::size_t points = 0;
  double mean_abs_error = 0, max_abs_error = 0;
};
// Over every point, or (pending_too = false) only those with no pending mechanism.
MemoryErrors memory_errors(const std::vector<MemorySourceCheck>& checks, bool pending_too);

// Every sweep of the set against the reference. Throws SweepRefused (a
// malformed sweep), JsonRefused (a malformed reference) or std::runtime_error
// naming a point whose tag.run the reference lacks.
std::vector<MemorySourceCheck> check_memory_set();

// "ptdp.validation/1" with "set": "memory": each source with its description
// and points, the reference's list of figures not comparable, and the figures
// over all points and over the points with no pending mechanism.
nlohmann::json memory_set_json(const std::vector<MemorySourceCheck>& checks);

}  // namespace ptdp
