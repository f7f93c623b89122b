// Machine profiles in and out of JSON, strictly (unknown keys are errors).
#include <algorithm>
#include <cctype>

#include "core/config/config.h"
#include "core/config/json_fields.h"
#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

namespace {

void read_link(JsonFields& top, const char* key, Link& link, ConfigErrors& errors) {
  const json* obj = top.object(key, false);
  if (obj == nullptr) return;
  JsonFields f(*obj, top.field(key), errors);
  f.required("bandwidth_gbs", link.bandwidth_gbs);
  f.required("latency_us", link.latency_us);
  f.optional("nics_per_node", link.nics_per_node);
  f.reject_unknown();
}

void read_efficiency(JsonFields& top, Efficiency& e, ConfigErrors& errors) {
  const json* obj = top.object("efficiency", false);
  if (obj == nullptr) return;
  JsonFields f(*obj, top.field("efficiency"), errors);
  f.optional("gemm", e.gemm);
  f.optional("gemm_k_half", e.gemm_k_half);
  f.optional("gemm_tile_m", e.gemm_tile_m);
  f.optional("gemm_tile_n", e.gemm_tile_n);
  f.optional("sms", e.sms);
  f.optional("memory", e.memory);
  f.optional("kernel_launch_us", e.kernel_launch_us);
  f.optional("flash_attention", e.flash_attention);
  f.optional("intra_node", e.intra_node);
  f.optional("inter_node", e.inter_node);
  f.reject_unknown();
}

// "filesystem": an object, or null (unknown, as when absent).
void read_filesystem(JsonFields& top, std::optional<Filesystem>& out, ConfigErrors& errors) {
  const json* value = top.value("filesystem");
  if (value == nullptr || value->is_null()) return;
  const json* obj = top.object("filesystem", false);
  if (obj == nullptr) return;
  Filesystem fs;
  JsonFields f(*obj, top.field("filesystem"), errors);
  f.required("write_gbs", fs.write_gbs);
  f.required("read_gbs", fs.read_gbs);
  f.optional("nic_gbs_per_node", fs.nic_gbs_per_node);
  f.optional("write_efficiency", fs.write_efficiency);
  f.optional("read_efficiency", fs.read_efficiency);
  f.reject_unknown();
  out = fs;
}

// "acceptance": {METRIC: {"expected", "tolerance", "source"}, ...}, each metric
// one of kAcceptanceMetrics; the values' ranges are validate()'s.
void read_acceptance(JsonFields& top, std::map<std::string, AcceptanceBand>& out, ConfigErrors& errors) {
  const json* obj = top.object("acceptance", false);
  if (obj == nullptr) return;
  for (const auto& [metric, band_json] : obj->items()) {
    const std::string at = top.field("acceptance") + "." + metric;
    if (!is_acceptance_metric(metric)) {
      std::string known;
      for (const auto& m : kAcceptanceMetrics) known += (known.empty() ? "" : ", ") + std::string(m.name);
      top.error(at, at + " is not a metric `ptdp accept` measures; known: " + known, ConfigErrorKind::unknown_field);
      continue;
    }
    AcceptanceBand band;
    JsonFields f(band_json, at, errors);
    f.required("expected", band.expected);
    f.required("tolerance", band.tolerance);
    f.required("source", band.source);
    f.reject_unknown();
    out[metric] = band;
  }
}

json to_json(const Link& l) {
  json j = {{"bandwidth_gbs", l.bandwidth_gbs}, {"latency_us", l.latency_us}};
  if (l.nics_per_node > 0) j["nics_per_node"] = l.nics_per_node;
  return j;
}

json to_json(const Efficiency& e) {
  return {{"gemm", e.gemm},         {"gemm_k_half", e.gemm_k_half},         {"gemm_tile_m", e.gemm_tile_m},
          {"gemm_tile_n", e.gemm_tile_n}, {"sms", e.sms},                  {"memory", e.memory},
          {"kernel_launch_us", e.kernel_launch_us}, {"flash_attention", e.flash_attention},
          {"intra_node", e.intra_node}, {"inter_node", e.inter_node}};
}

}  // namespace

json to_json(const std::optional<Filesystem>& fs) {
  if (!fs) return nullptr;
  return {{"write_gbs", fs->write_gbs}, {"read_gbs", fs->read_gbs}, {"nic_gbs_per_node", fs->nic_gbs_per_node},
          {"write_efficiency", fs->write_efficiency}, {"read_efficiency", fs->read_efficiency}};
}

double Machine::peak_for(const std::string& precision) const {
  auto it = peak_tflops.find(precision);
  return it == peak_tflops.end() ? 0.0 : it->second;
}

std::string file_name_problem(const std::string& name) {
  const bool safe = !name.empty() && name.size() <= kMaxFileName && name.front() != '.' &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
                    });
  return safe ? "" : "must be a file name of letters, digits, '_', '-' and '.', not starting with '.', 1 to " +
                         std::to_string(kMaxFileName) + " characters (got " + std::to_string(name.size()) + ": " +
                         json_excerpt(name) + ")";
}

Machine machine_from_json(const json& j, const std::string& where) {
  ConfigErrors errors;
  Machine m;
  JsonFields f(j, where, errors);
  f.required("name", m.name);
  f.optional_enum("device", m.device, {{"cpu", Device::cpu}, {"cuda", Device::cuda}});
  f.optional("gpu", m.gpu);
  f.optional("gpus_per_node", m.gpus_per_node);
  f.optional("memory_bytes", m.memory_bytes);
  f.optional("memory_reserved_bytes", m.memory_reserved_bytes);
  f.optional("memory_bandwidth_gbs", m.memory_bandwidth_gbs);
  f.optional("peak_tflops", m.peak_tflops);
  read_link(f, "intra_node", m.intra_node, errors);
  read_link(f, "inter_node", m.inter_node, errors);
  read_efficiency(f, m.efficiency, errors);
  read_filesystem(f, m.filesystem, errors);
  f.optional("sources", m.sources);
  read_acceptance(f, m.acceptance, errors);
  f.reject_unknown();
  if (errors.empty()) errors = validate(m, where);
  if (!errors.empty()) throw ConfigRefused(std::move(errors));
  return m;
}

json to_json(const Machine& m) {
  json j = {{"name", m.name},
            {"device", device_name(m.device)},
            {"gpu", m.gpu},
            {"gpus_per_node", m.gpus_per_node},
            {"memory_bytes", m.memory_bytes},
            {"memory_reserved_bytes", m.memory_reserved_bytes},
            {"memory_bandwidth_gbs", m.memory_bandwidth_gbs},
            {"peak_tflops", m.peak_tflops},
            {"intra_node", to_json(m.intra_node)},
            {"inter_node", to_json(m.inter_node)},
            {"efficiency", to_json(m.efficiency)},
            {"filesystem", to_json(m.filesystem)}};
  if (!m.sources.empty()) j["sources"] = m.sources;
  return j;
}

}  // namespace ptdp
