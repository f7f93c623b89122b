// Calibration tables: JSON in and out, and the nearest-shape GEMM correction.
#include "core/sim/calibration.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "core/config/bounds.h"
#include "core/config/config.h"
#include "core/config/json_read.h"
#include "core/results/plausibility.h"

namespace ptdp {

using nlohmann::json;

namespace {

// Member `key` as a finite number above 0 (`positive`) or at least 0, at most
// `hi`, never denormal; 0 when absent and not required.
double number(const JsonAt& j, const char* key, bool required, bool positive, double hi = kMaxRate) {
  const auto v = required ? std::optional<JsonAt>(j.at(key)) : j.find(key);
  if (!v) return 0;
  const double x = v->get<double>();
  if (positive ? !(x > 0) : !(x >= 0)) v->refuse(positive ? "must be positive" : "must be at least 0");
  if (x > hi) v->refuse("must be at most " + json_excerpt(hi));
  if (x != 0)
    if (const std::string why = positive_figure_problem(x, hi); !why.empty()) v->refuse(why);
  return x;
}

GemmSample gemm_of(const JsonAt& g) {
  GemmSample s;
  constexpr double kMaxDim = static_cast<double>(kMaxElements);
  s.shape = {number(g, "m", true, true, kMaxDim), number(g, "n", true, true, kMaxDim), number(g, "k", true, true, kMaxDim),
             g.find("batch") ? number(g, "batch", true, true, kMaxDim) : 1.0};
  s.seconds = number(g, "seconds", true, true, kMaxSeconds);
  return s;
}

// "host_sharing": {"2": 1.3, ...}: rank counts of at least 2, written in digits.
void read_host_sharing(const JsonAt& sharing, Calibration& c) {
  for (const auto& [ranks, slowdown] : sharing.members()) {
    int n = 0;
    const auto [end, error] = std::from_chars(ranks.data(), ranks.data() + ranks.size(), n);
    if (error != std::errc() || end != ranks.data() + ranks.size() || n < 2 || n > kMaxRanks)
      slowdown.refuse("a rank count of at least 2 expected as the key (got \"" + ranks + "\")");
    const double x = slowdown.get<double>();
    if (!(x > 0)) slowdown.refuse("a positive slowdown expected");
    if (const std::string why = positive_figure_problem(x, kMaxRate); !why.empty()) slowdown.refuse(why);
    c.host_sharing[n] = x;
  }
}

}  // namespace

Calibration Calibration::from_json(const json& doc, const std::string& where) {
  const JsonAt j(doc, where);
  if (!doc.is_object() || doc.value("schema", json()) != kCalibrationSchema)
    j.refuse(std::string("not a calibration table (\"schema\": \"") + kCalibrationSchema + "\" expected)");
  Calibration c;
  c.name = j.get<std::string>("name", "");
  c.source = j.get<std::string>("source", "");
  c.precision = j.get<std::string>("precision", "bf16");
  // The plan refuses fp8 (config_json.cpp); GEMMs measured in fp8 would smuggle it into a projection.
  if (c.precision != "fp32" && c.precision != "bf16" && c.precision != "fp16")
    j.at("precision").refuse("\"" + c.precision + "\" is not a precision ptdp projects (fp32, bf16 or fp16; fp8 is "
                             "out of scope for now: its scaling recipes are not modelled)");
  c.memory_bandwidth_gbs = number(j, "memory_bandwidth_gbs", false, false);  // 0: not measured
  c.flash_attention_tflops = number(j, "flash_attention_tflops", false, false);
  if (const auto gemms = j.find("gemms"))
    for (const JsonAt& g : gemms->elements()) c.gemms.push_back(gemm_of(g));
  if (const auto collectives = j.find("collectives"))
    for (const auto& [key, value] : collectives->members())
      c.collectives[key] = {number(value, "alpha_us", true, false, kMaxLatencyUs),
                             number(value, "busbw_gbs", true, true)};
  if (const auto sharing = j.find("host_sharing")) read_host_sharing(*sharing, c);
  c.machine = j.at("machine").get<std::string>();  // the profile it calibrates (machine_mismatch)
  if (const std::string why = file_name_problem(c.machine); !why.empty()) j.at("machine").refuse("machine name " + why);
  if (c.gemms.empty() && c.collectives.empty() && c.memory_bandwidth_gbs == 0 && c.flash_attention_tflops == 0)
    j.refuse("holds no measurement (no GEMM, collective, memory bandwidth or attention rate): a table of nothing "
             "would price every operation by the profile's datasheet while saying it was calibrated");
  return c;
}

Calibration Calibration::load(const std::filesystem::path& file) {
  Calibration c = from_json(read_json_file(file), "calibration " + file.string());
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

std::string Calibration::machine_mismatch(const std::string& profile) const {
  if (machine == profile) return "";
  return "calibration " + name + " measured machine " + machine + ", not " + profile +
         ": another machine's costs would price this one";
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
