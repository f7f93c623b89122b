// Calibration tables: JSON in and out, and the nearest-shape GEMM correction.
#include "core/sim/calibration.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace ptdp {

using nlohmann::json;

namespace {

double number(const json& j, const char* key, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) throw std::runtime_error(where + ": field \"" + key + "\" is missing");
    return 0;
  }
  if (!j[key].is_number()) throw std::runtime_error(where + ": field \"" + key + "\" must be a number");
  return j[key].get<double>();
}

}  // namespace

Calibration Calibration::from_json(const json& j, const std::string& where) {
  if (!j.is_object() || j.value("schema", "") != kCalibrationSchema)
    throw std::runtime_error(where + ": not a calibration table (\"schema\": \"" + kCalibrationSchema + "\" expected)");
  Calibration c;
  c.name = j.value("name", "");
  c.machine = j.value("machine", "");
  c.source = j.value("source", "");
  c.precision = j.value("precision", "bf16");
  c.memory_bandwidth_gbs = number(j, "memory_bandwidth_gbs", where, false);
  c.flash_attention_tflops = number(j, "flash_attention_tflops", where, false);
  const json gemms = j.value("gemms", json::array());
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const std::string at = where + ": gemms[" + std::to_string(i) + "]";
    GemmSample s;
    s.shape = {number(gemms[i], "m", at, true), number(gemms[i], "n", at, true), number(gemms[i], "k", at, true),
               gemms[i].contains("batch") ? number(gemms[i], "batch", at, true) : 1.0};
    s.seconds = number(gemms[i], "seconds", at, true);
    if (s.seconds <= 0 || s.shape.flops() <= 0) throw std::runtime_error(at + ": sizes and seconds must be positive");
    c.gemms.push_back(s);
  }
  const json collectives = j.value("collectives", json::object());
  for (const auto& [key, value] : collectives.items()) {
    const std::string at = where + ": collectives." + key;
    c.collectives[key] = {number(value, "alpha_us", at, true), number(value, "busbw_gbs", at, true)};
  }
  const json sharing = j.value("host_sharing", json::object());
  for (const auto& [ranks, slowdown] : sharing.items()) {
    const std::string at = where + ": host_sharing." + ranks;
    const int n = std::atoi(ranks.c_str());
    if (n < 2 || !slowdown.is_number() || slowdown.get<double>() <= 0)
      throw std::runtime_error(at + ": a rank count of at least 2 and a positive slowdown expected");
    c.host_sharing[n] = slowdown.get<double>();
  }
  return c;
}

Calibration Calibration::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("calibration " + file.string() + " cannot be read");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error("calibration " + file.string() + " is not valid JSON: " + e.what());
  }
  Calibration c = from_json(j, "calibration " + file.string());
  if (c.name.empty()) c.name = file.stem().string();
  return c;
}

json Calibration::to_json() const {
  json g = json::array();
  for (const auto& s : gemms)
    g.push_back({{"m", s.shape.m}, {"n", s.shape.n}, {"k", s.shape.k}, {"batch", s.shape.batch}, {"seconds", s.seconds}});
  json coll = json::object();
  for (const auto& [key, r] : collectives) coll[key] = {{"alpha_us", r.alpha_us}, {"busbw_gbs", r.busbw_gbs}};
  json sharing = json::object();
  for (const auto& [ranks, slowdown] : host_sharing) sharing[std::to_string(ranks)] = slowdown;
  return {{"schema", kCalibrationSchema}, {"name", name},     {"machine", machine},
          {"source", source},             {"precision", precision},
          {"memory_bandwidth_gbs", memory_bandwidth_gbs}, {"flash_attention_tflops", flash_attention_tflops},
          {"gemms", g},                   {"collectives", coll},
          {"host_sharing", sharing}};
}

double Calibration::gemm_time_ratio(const GemmShape& g, const DeviceRates& rates) const {
  if (gemms.empty()) return 1.0;
  const auto distance = [&](const GemmShape& s) {
    const auto d = [](double a, double b) { return std::log(a / b) * std::log(a / b); };
    return d(s.m, g.m) + d(s.n, g.n) + d(s.k, g.k) + d(s.batch, g.batch);
  };
  const GemmSample* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& s : gemms)
    if (distance(s.shape) < best_distance) best_distance = distance(s.shape), best = &s;
  return best->seconds / rates.analytical_gemm_seconds(best->shape);
}

double Calibration::host_sharing_at(int ranks) const {
  double slowdown = 1.0;
  for (const auto& [n, s] : host_sharing)
    if (n <= ranks) slowdown = s;
  return slowdown;
}

const CollectiveRate* Calibration::collective(Collective c, bool intra_node) const {
  auto it = collectives.find(collective_key(c, intra_node));
  return it == collectives.end() ? nullptr : &it->second;
}

std::string collective_key(Collective c, bool intra_node) {
  return (intra_node ? "intra_node." : "inter_node.") + collective_name(c);
}

}  // namespace ptdp
