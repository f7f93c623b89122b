// Config files in and out: {"model": {...}, "plan": {...}, "machine": "name" | {...},
// "optimizer": {...}}. Readers collect every error and throw ConfigRefused once.
#include <fstream>
#include <sstream>

#include "core/config/config.h"
#include "core/config/json_fields.h"

namespace ptdp {

using nlohmann::json;

namespace {

const std::map<std::string, Recompute> kRecompute = {
    {"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
const std::map<std::string, Precision> kPrecision = {
    {"fp32", Precision::fp32}, {"bf16", Precision::bf16}, {"fp16", Precision::fp16}};

void read_model(JsonFields& top, Model& m, ConfigErrors& errors) {
  const json* obj = top.object("model", true);
  if (obj == nullptr) return;
  JsonFields f(*obj, "model", errors);
  f.required("layers", m.layers);
  f.required("hidden", m.hidden);
  f.required("heads", m.heads);
  f.required("seq_len", m.seq_len);
  f.required("vocab", m.vocab);
  f.optional("ffn_hidden", m.ffn_hidden);
  f.reject_unknown();
}

void read_plan(JsonFields& top, Plan& p, ConfigErrors& errors) {
  const json* obj = top.object("plan", true);
  if (obj == nullptr) return;
  JsonFields f(*obj, "plan", errors);
  f.required("tp", p.tp);
  f.required("pp", p.pp);
  f.required("dp", p.dp);
  f.optional("virtual_stages", p.virtual_stages);
  f.required("micro_batch", p.micro_batch);
  f.required("global_batch", p.global_batch);
  f.optional("schedule", p.schedule);
  f.optional_enum("recompute", p.recompute, kRecompute);
  f.optional("sequence_parallel", p.sequence_parallel);
  f.optional("scatter_gather", p.scatter_gather);
  f.optional_enum("precision", p.precision, kPrecision);
  f.optional("seed", p.seed);
  f.reject_unknown();
}

void read_optimizer(JsonFields& top, OptimizerConfig& o, ConfigErrors& errors) {
  const json* obj = top.object("optimizer", false);
  if (obj == nullptr) return;
  JsonFields f(*obj, "optimizer", errors);
  f.optional("lr", o.lr);
  f.optional("beta1", o.beta1);
  f.optional("beta2", o.beta2);
  f.optional("eps", o.eps);
  f.optional("weight_decay", o.weight_decay);
  f.optional("clip_grad", o.clip_grad);
  f.reject_unknown();
}

void read_link(JsonFields& top, const char* key, Link& link, ConfigErrors& errors) {
  const json* obj = top.object(key, false);
  if (obj == nullptr) return;
  JsonFields f(*obj, top.field(key), errors);
  f.required("bandwidth_gbs", link.bandwidth_gbs);
  f.required("latency_us", link.latency_us);
  f.reject_unknown();
}

void read_machine_fields(const json& j, const std::string& where, Machine& m, ConfigErrors& errors) {
  JsonFields f(j, where, errors);
  f.required("name", m.name);
  f.optional("gpu", m.gpu);
  f.optional("gpus_per_node", m.gpus_per_node);
  f.optional("memory_bytes", m.memory_bytes);
  f.optional("memory_bandwidth_gbs", m.memory_bandwidth_gbs);
  f.optional("peak_tflops", m.peak_tflops);
  read_link(f, "intra_node", m.intra_node, errors);
  read_link(f, "inter_node", m.inter_node, errors);
  f.optional("sources", m.sources);
  f.reject_unknown();
}

json parse_file(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file);
  if (!in) throw ConfigRefused({{what, "cannot open " + file.string()}});
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw ConfigRefused({{what, file.string() + " is not valid JSON: " + e.what()}});
  }
}

}  // namespace

ConfigRefused::ConfigRefused(ConfigErrors errors)
    : std::runtime_error(errors.empty() ? "config refused" : errors.front().message),
      errors_(std::move(errors)) {}

double Machine::peak_for(const std::string& precision) const {
  auto it = peak_tflops.find(precision);
  return it == peak_tflops.end() ? 0.0 : it->second;
}

std::string to_string(Recompute r) {
  for (const auto& [name, value] : kRecompute)
    if (value == r) return name;
  return "?";
}

std::string to_string(Precision p) {
  for (const auto& [name, value] : kPrecision)
    if (value == p) return name;
  return "?";
}

Machine machine_from_json(const json& j, const std::string& where) {
  ConfigErrors errors;
  Machine m;
  read_machine_fields(j, where, m, errors);
  if (!errors.empty()) throw ConfigRefused(std::move(errors));
  return m;
}

Machine load_machine(const std::string& name, const std::filesystem::path& machines_dir) {
  const auto file = machines_dir / (name + ".json");
  if (!std::filesystem::exists(file)) {
    std::string known;
    if (std::filesystem::is_directory(machines_dir))
      for (const auto& e : std::filesystem::directory_iterator(machines_dir))
        if (e.path().extension() == ".json") known += " " + e.path().stem().string();
    throw ConfigRefused({{"machine", "machine \"" + name + "\" is not known; known machines:" +
                                         (known.empty() ? " (none in " + machines_dir.string() + ")" : known)}});
  }
  return machine_from_json(parse_file(file, "machine"), "machine(" + name + ")");
}

Config config_from_json(const json& j, const std::filesystem::path& machines_dir) {
  ConfigErrors errors;
  Config c;
  JsonFields top(j, "", errors);
  read_model(top, c.model, errors);
  read_plan(top, c.plan, errors);
  read_optimizer(top, c.optimizer, errors);
  const json* machine = top.value("machine");
  if (machine == nullptr) {
    top.error("machine", "machine is missing (a profile name or an object)");
  } else if (machine->is_string()) {
    try {
      c.machine = load_machine(machine->get<std::string>(), machines_dir);
    } catch (const ConfigRefused& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  } else if (machine->is_object()) {
    read_machine_fields(*machine, "machine", c.machine, errors);
  } else {
    top.error("machine", "machine must be a profile name or an object (got " + machine->dump() + ")");
  }
  top.reject_unknown();
  if (!errors.empty()) throw ConfigRefused(std::move(errors));
  if (c.model.ffn_hidden == 0) c.model.ffn_hidden = c.model.ffn();
  return c;
}

Config load_config(const std::filesystem::path& file, const std::filesystem::path& machines_dir) {
  return config_from_json(parse_file(file, "config"), machines_dir);
}

std::filesystem::path default_machines_dir() {
  if (const char* env = std::getenv("PTDP_MACHINES")) return env;
  return std::filesystem::path(PTDP_SOURCE_DIR) / "sweeps" / "machines";
}

}  // namespace ptdp
