// The "checkpoint" metrics block in and out of JSON; see checkpoint_metrics.h.
#include "core/results/checkpoint_metrics.h"

#include "core/results/result_io.h"

namespace ptdp {

using json = nlohmann::json;

void set_checkpoint_interval(CheckpointMetrics& c, int every, double iteration_s) {
  c.every = every;
  c.save_share.reset();
  if (c.save_s && every > 0 && iteration_s >= 0) c.save_share = *c.save_s / (every * iteration_s + *c.save_s);
}

json to_json(const CheckpointMetrics& c) {
  return {{"bytes_total", or_null(c.bytes_total)}, {"bytes_per_rank_max", or_null(c.bytes_per_rank_max)},
          {"save_s", or_null(c.save_s)},           {"load_s", or_null(c.load_s)},
          {"save_gbs", or_null(c.save_gbs)},       {"load_gbs", or_null(c.load_gbs)},
          {"save_gbs_per_rank", or_null(c.save_gbs_per_rank)}, {"load_gbs_per_rank", or_null(c.load_gbs_per_rank)},
          {"every", or_null(c.every)},             {"save_share", or_null(c.save_share)},
          {"filesystem", c.filesystem}};
}

CheckpointMetrics checkpoint_metrics_of(const JsonAt& j) {
  j.object();
  CheckpointMetrics c;
  c.bytes_total = value_or_null<std::int64_t>(j, "bytes_total");
  c.bytes_per_rank_max = value_or_null<std::int64_t>(j, "bytes_per_rank_max");
  c.save_s = value_or_null<double>(j, "save_s");
  c.load_s = value_or_null<double>(j, "load_s");
  c.save_gbs = value_or_null<double>(j, "save_gbs");
  c.load_gbs = value_or_null<double>(j, "load_gbs");
  c.save_gbs_per_rank = value_or_null<double>(j, "save_gbs_per_rank");
  c.load_gbs_per_rank = value_or_null<double>(j, "load_gbs_per_rank");
  c.every = value_or_null<int>(j, "every");
  c.save_share = value_or_null<double>(j, "save_share");
  if (const auto fs = j.find("filesystem")) c.filesystem = fs->value();
  return c;
}

}  // namespace ptdp
