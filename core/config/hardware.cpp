// GPU names to profiles, the machine at hand, and contradictions of a named profile.
#include "core/config/hardware.h"

#include <array>
#include <utility>

#include "core/config/config.h"

namespace ptdp {

namespace {

// Words of a CUDA device name and the profile they mean, first match wins.
// The A100's profile is the 80 GB part: a 40 GB A100 has none.
struct GpuProfileRule {
  const char* word;
  const char* also;  // a second word the name must hold ("" none)
  const char* profile;
};
constexpr std::array<GpuProfileRule, 3> kGpuProfiles = {{
    {"H200", "", "h200-141gb"},
    {"H100", "", "h100-80gb"},
    {"A100", "80GB", "a100-80gb"},
}};

bool name_holds(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

std::string known_gpu_profiles() {
  std::string out;
  for (const auto& r : kGpuProfiles) out += std::string(out.empty() ? "" : ", ") + r.profile;
  return out;
}

}  // namespace

std::string profile_for_gpu(const std::string& gpu_name) {
  for (const auto& r : kGpuProfiles)
    if (name_holds(gpu_name, r.word) && name_holds(gpu_name, r.also)) return r.profile;
  return "";
}

Machine machine_at_hand(const Hardware& hw, const std::filesystem::path& machines_dir) {
  const std::string profile = hw.device == Device::cpu ? "cpu-host" : profile_for_gpu(hw.name);
  if (profile.empty())
    throw ConfigRefused({{"machine", "the config names no machine and no shipped profile matches the GPU \"" + hw.name +
                                         "\" (profiles by GPU: " + known_gpu_profiles() +
                                         "); name a profile or give one as an object in \"machine\""}});
  Machine m = load_machine(profile, machines_dir);
  m.gpus_per_node = hw.ranks_per_host;
  m.sources["gpus_per_node"] = "detected: the most ranks on one host in this run";
  return m;
}

std::vector<std::string> hardware_mismatches(const Machine& m, const Hardware& hw) {
  std::vector<std::string> out;
  const std::string profile = "machine profile '" + m.name + "'";
  if (m.device != hw.device) {
    out.push_back(profile + " describes a " + device_name(m.device) + " machine, and this run is on the " +
                  device_name(hw.device) + " (" + hw.name + "): its peaks and percentages are not of this hardware");
  } else if (hw.device == Device::cuda && profile_for_gpu(hw.name) != m.name) {
    const std::string fits = profile_for_gpu(hw.name);
    out.push_back(profile + " is not the profile of this GPU (" + hw.name + (fits.empty() ? ", which has none" :
                  ", whose profile is " + fits) + ")");
  }
  if (m.gpus_per_node < hw.ranks_per_host)
    out.push_back(profile + " has gpus_per_node=" + std::to_string(m.gpus_per_node) + ", below the " +
                  std::to_string(hw.ranks_per_host) + " ranks this run places on one host");
  return out;
}

std::string profile_measured_on(const Machine& m) {
  const auto on = m.sources.find("measured_on");
  return on == m.sources.end() ? "" : on->second;
}

namespace {
// hardware.peak: {"from": "measured", the measurement} or {"from": "profile", "measured_on"}.
nlohmann::json peak_json(const Hardware& hw) {
  if (!hw.measured_peak) return {{"from", "profile"}, {"profile", hw.profile}, {"measured_on", hw.profile_measured_on}};
  nlohmann::json j = to_json(*hw.measured_peak);
  j["from"] = "measured";
  j["cached"] = hw.measured_peak->cached;
  return j;
}

void read_peak(const JsonAt& peak, Hardware& hw) {
  const JsonAt from = peak.object().at("from");
  const std::string how = from.get<std::string>();
  if (how == "measured") {
    hw.measured_peak = measured_peak_of(peak);
    hw.measured_peak->cached = peak.at("cached").get<bool>();
  } else if (how == "profile") {
    hw.profile_measured_on = peak.get<std::string>("measured_on", "");
  } else {
    from.refuse("must be \"measured\" or \"profile\"");
  }
}
}  // namespace

nlohmann::json to_json(const Hardware& hw) {
  nlohmann::json j = {{"device", device_name(hw.device)}, {"name", hw.name},
                      {"cores", hw.cores},                {"memory_bytes", hw.memory_bytes},
                      {"hosts", hw.hosts},                {"ranks_per_host", hw.ranks_per_host},
                      {"profile", hw.profile},            {"profile_chosen", hw.detected ? "detected" : "named"},
                      {"mismatch", hw.mismatch}};
  // Written where known, so that a result from before these fields reads back the same.
  if (hw.measured_peak || !hw.profile_measured_on.empty()) j["peak"] = peak_json(hw);
  if (!hw.errors.empty()) j["errors"] = hw.errors;
  return j;
}

Hardware hardware_of(const JsonAt& j) {
  j.object();
  Hardware hw;
  const JsonAt device = j.at("device");
  const auto d = device_from_name(device.get<std::string>());
  if (!d) device.refuse("must be cpu or cuda");
  hw.device = *d;
  hw.name = j.get<std::string>("name", "");
  hw.cores = j.get<int>("cores", 0);
  hw.memory_bytes = j.get<std::int64_t>("memory_bytes", 0);
  hw.hosts = j.get<int>("hosts", 1);
  hw.ranks_per_host = j.get<int>("ranks_per_host", 1);
  hw.profile = j.get<std::string>("profile", "");
  const JsonAt chosen = j.at("profile_chosen");
  const std::string how = chosen.get<std::string>();
  if (how != "detected" && how != "named") chosen.refuse("must be \"detected\" or \"named\"");
  hw.detected = how == "detected";
  if (const auto m = j.find("mismatch"))
    for (const auto& e : m->elements()) hw.mismatch.push_back(e.get<std::string>());
  if (const auto e = j.find("errors"))  // absent from results written before it
    for (const auto& x : e->elements()) hw.errors.push_back(x.get<std::string>());
  if (const auto peak = j.find("peak")) read_peak(*peak, hw);
  return hw;
}

}  // namespace ptdp
