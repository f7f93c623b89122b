// Result files: statistics of per-iteration samples, provenance, and writing
// JSON atomically (a temporary file renamed into place, never half-written).
#pragma once
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptdp {

inline constexpr const char* kResultSchema = "ptdp.result/2";

// {"median", "min", "max", "mean", "samples": [...]}; empty samples give nulls.
nlohmann::json summarize_samples(const std::vector<double>& samples);
double median(std::vector<double> samples);

// Writes `j` to `path` through a temporary file in the same folder and a rename.
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j, int indent = 2);

// {"commit", "compiler", "openblas", ...}: what built and links this program.
nlohmann::json software_info();

}  // namespace ptdp
