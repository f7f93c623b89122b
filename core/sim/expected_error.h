// How far a projection can be trusted: the paper validation's relative errors
// (results/paper-validation.json, `ptdp validate --out`) for configurations of
// the same class as the one projected. A class is the machine profile (the GPU
// kind), the pipeline depth range and where the tensor-parallel group lies
// (none, within a node, across nodes). A class with fewer than
// kMinClassPoints published points falls back to every point of the machine,
// and the block says so; a missing or unreadable file gives null figures with
// the reason, never a failed projection.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/config.h"

namespace ptdp {

inline constexpr int kMinClassPoints = 5;

struct ErrorClass {
  std::string machine;   // profile name, e.g. "a100-80gb"
  std::string pp_range;  // "1", "2-8" or "9+"
  std::string tp_span;   // "none" (t = 1), "within_node" (t ≤ GPUs per node), "across_nodes"
  bool operator==(const ErrorClass&) const = default;
};

ErrorClass error_class(const Config& cfg);
nlohmann::json to_json(const ErrorClass& c);

// One published point of the validation: its class and (projected − paper) / paper.
struct ClassifiedError {
  ErrorClass cls;
  double error = 0;
};

// The points of a validation file whose metric is a throughput (the bubble
// figures compare formulas, not time). Throws std::runtime_error naming what is
// missing, e.g. a file written before points carried their class.
std::vector<ClassifiedError> read_validation_errors(const nlohmann::json& validation);

// The "expected_error" block for `cfg` from the given points:
// {"source", "class", "matched": "class"|"machine"|null, "n", "mean_abs_error",
//  "max_abs_error", "mean_error", "note"}.
nlohmann::json expected_error(const Config& cfg, const std::vector<ClassifiedError>& points, const std::string& source);

// The same, reading `file` (default_validation_file()); its problems become the reason.
nlohmann::json expected_error(const Config& cfg, const std::filesystem::path& file);

}  // namespace ptdp
