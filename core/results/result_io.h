// Result files: statistics of per-iteration samples and provenance; writing
// them (atomically, only over regular files) is output_files.h.
#pragma once
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"
#include "core/results/output_files.h"
#include "core/results/result_mode.h"

namespace ptdp {

inline constexpr const char* kResultSchema = "ptdp.result/2";

// {"median", "min", "max", "mean", "samples": [...]}; empty samples give nulls.
nlohmann::json summarize_samples(const std::vector<double>& samples);
double median(std::vector<double> samples);
double mean(const std::vector<double>& samples);  // 0 when empty

// A figure a result may not know: its value, or null.
template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <typename T>
nlohmann::json or_null(const std::vector<T>& v) {
  return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
}
// And back: the value at `key`, or nothing where it is null or absent.
template <typename T>
std::optional<T> value_or_null(const JsonAt& j, const char* key) {
  const auto v = j.find(key);
  return v ? std::optional<T>(v->get<T>()) : std::nullopt;
}

// The "mode" of the object at j (a result, a sweep record, a compared row);
// refused naming the field and the modes' names otherwise.
ResultMode mode_at(const JsonAt& j);

// {"commit", "compiler", "openblas", ...}: what built and links this program.
nlohmann::json software_info();

}  // namespace ptdp
