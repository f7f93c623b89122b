// A result's "metrics"/"checkpoint" block: the checkpoint's size and how long
// saving and loading it take. One set of keys for a projection
// (core/sim/checkpoint_cost.h fills it from the machine's filesystem) and a
// measured run (the runtime fills it from its own files and clocks); a figure
// the mode cannot know is null. docs/results-format.md lists the keys.
#pragma once
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/config/json_read.h"

namespace ptdp {

struct CheckpointMetrics {
  std::optional<std::int64_t> bytes_total;         // all files of one checkpoint
  std::optional<std::int64_t> bytes_per_rank_max;  // the most one rank writes
  std::optional<double> save_s, load_s;            // wall time of one save, of one load
  std::optional<double> save_gbs, load_gbs;        // bytes moved by all ranks together / time, GB/s
  std::optional<double> save_gbs_per_rank, load_gbs_per_rank;  // bytes_per_rank_max / time, GB/s
  std::optional<int> every;                        // iterations between saves
  std::optional<double> save_share;                // save_s / (every·iteration_s + save_s): training time spent saving
  nlohmann::json filesystem;                       // where: the profile's figures and limits, or the measured
                                                   //   path's type; null when unknown
};

// Saving every `every` iterations of `iteration_s` seconds: sets every and save_share (null without save_s).
void set_checkpoint_interval(CheckpointMetrics& c, int every, double iteration_s);

nlohmann::json to_json(const CheckpointMetrics& c);
CheckpointMetrics checkpoint_metrics_of(const JsonAt& j);  // refuses a wrong type, naming its pointer

}  // namespace ptdp
