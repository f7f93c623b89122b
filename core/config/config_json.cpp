// Config files in and out: {"model": {...}, "plan": {...}, "machine": "name" | {...},
// "optimizer": {...}}. Readers collect every error and throw ConfigRefused once.
#include <cstdlib>

#include "core/config/bounds.h"
#include "core/config/config.h"
#include "core/config/data_root.h"
#include "core/config/json_fields.h"
#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

namespace {

const std::map<std::string, Recompute> kRecompute = {
    {"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
const std::map<std::string, Precision> kPrecision = {
    {"fp32", Precision::fp32}, {"bf16", Precision::bf16}, {"fp16", Precision::fp16}};
const std::map<std::string, Attention> kAttention = {{"unfused", Attention::unfused}, {"flash", Attention::flash}};
const std::map<std::string, Norm> kNorm = {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}};
const std::map<std::string, Activation> kActivation = {{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu}};
const std::map<std::string, Position> kPosition = {{"learned", Position::learned}, {"rope", Position::rope}};

template <class E>
std::string name_of(const std::map<std::string, E>& names, E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

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
  f.optional("dropout", m.dropout);
  f.optional("vocab_pad_to", m.vocab_pad_to);
  f.optional("kv_heads", m.kv_heads);
  f.optional_enum("norm", m.norm, kNorm);
  f.optional_enum("activation", m.activation, kActivation);
  f.optional_enum("position", m.position, kPosition);
  f.optional("rope_theta", m.rope_theta);
  f.optional("bias", m.bias);
  f.optional("tied_embeddings", m.tied_embeddings);
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
  f.optional("layers_per_stage", p.layers_per_stage);
  f.required("micro_batch", p.micro_batch);
  f.required("global_batch", p.global_batch);
  f.optional("schedule", p.schedule);
  f.optional_enum("recompute", p.recompute, kRecompute);
  f.optional("sequence_parallel", p.sequence_parallel);
  f.optional("scatter_gather", p.scatter_gather);
  f.optional("tp_comm_overlap", p.tp_comm_overlap);
  if (const json* precision = f.value("precision"); precision != nullptr && *precision == "fp8")
    f.error(f.field("precision"), "plan.precision=\"fp8\" is out of scope for now: ptdp trains and projects "
                                  "fp32, bf16 and fp16 (FP8's scaling recipes are not modelled)");
  else
    f.optional_enum("precision", p.precision, kPrecision);
  f.optional("seed", p.seed);
  f.optional("fused_ops", p.fused_ops);
  f.optional_enum("attention", p.attention, kAttention);
  f.optional("distributed_optimizer", p.distributed_optimizer);
  f.optional("overlap_grad_reduce", p.overlap_grad_reduce);
  f.optional("overlap_param_gather", p.overlap_param_gather);
  f.optional("grad_accumulation_fusion", p.grad_accumulation_fusion);
  f.optional("deterministic", p.deterministic);
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

}  // namespace

json parse_json_file(const std::filesystem::path& file, const std::string& what) {
  try {
    return read_json_file(file);
  } catch (const JsonRefused& e) {
    throw ConfigRefused({{what, e.what(), ConfigErrorKind::type}});
  }
}

ConfigRefused::ConfigRefused(ConfigErrors errors)
    : std::runtime_error(errors.empty() ? "config refused" : errors.front().message),
      errors_(std::move(errors)) {}

std::string to_string(Recompute r) { return name_of(kRecompute, r); }
std::string to_string(Attention a) { return name_of(kAttention, a); }
std::string to_string(Precision p) { return name_of(kPrecision, p); }
std::string to_string(Norm n) { return name_of(kNorm, n); }
std::string to_string(Activation a) { return name_of(kActivation, a); }
std::string to_string(Position p) { return name_of(kPosition, p); }

Machine load_machine(const std::string& name, const std::filesystem::path& machines_dir) {
  if (const std::string why = file_name_problem(name); !why.empty())
    throw ConfigRefused({{"machine", "machine name " + why, ConfigErrorKind::type}});
  const auto file = machines_dir / (name + ".json");
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    std::string known;
    if (std::filesystem::is_directory(machines_dir, ec))
      for (const auto& e : std::filesystem::directory_iterator(machines_dir, ec))
        if (e.path().extension() == ".json") known += " " + e.path().stem().string();
    throw ConfigRefused({{"machine", "machine \"" + name + "\" is not known; known machines:" +
                                         (known.empty() ? " (none in " + machines_dir.string() + ")" : known)}});
  }
  return machine_from_json(parse_json_file(file, "machine"), "machine(" + name + ")");
}

Config config_from_json(const json& j, const std::filesystem::path& machines_dir, const MachineAtHand& at_hand) {
  ConfigErrors errors;
  Config c;
  JsonFields top(j, "", errors);
  read_model(top, c.model, errors);
  read_plan(top, c.plan, errors);
  read_optimizer(top, c.optimizer, errors);
  const json* machine = top.value("machine");
  if (machine == nullptr && at_hand) {
    try {
      c.machine = at_hand();
    } catch (const ConfigRefused& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  } else if (machine == nullptr) {
    top.error("machine", "machine is missing (a profile name or an object)", ConfigErrorKind::missing);
  } else if (machine->is_string()) {
    try {
      c.machine = load_machine(machine->get<std::string>(), machines_dir);
    } catch (const ConfigRefused& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  } else if (machine->is_object()) {
    try {
      c.machine = machine_from_json(*machine, "machine");
    } catch (const ConfigRefused& e) {
      errors.insert(errors.end(), e.errors().begin(), e.errors().end());
    }
  } else {
    top.error("machine", "machine must be a profile name or an object (got " + machine->dump() + ")",
              ConfigErrorKind::type);
  }
  top.reject_unknown();
  if (!errors.empty()) throw ConfigRefused(std::move(errors));
  if (c.model.ffn_hidden == 0 && c.model.hidden <= kMaxSize) c.model.ffn_hidden = c.model.ffn();  // else refused by validate()
  if (c.model.kv_heads == 0) c.model.kv_heads = c.model.heads;
  return c;
}

Config load_config(const std::filesystem::path& file, const std::filesystem::path& machines_dir,
                   const MachineAtHand& at_hand) {
  return config_from_json(parse_json_file(file, "config"), machines_dir, at_hand);
}

std::filesystem::path default_machines_dir() {
  if (const char* env = std::getenv("PTDP_MACHINES")) return env;
  return data_root() / "sweeps" / "machines";
}

std::filesystem::path default_validation_file() {
  if (const char* env = std::getenv("PTDP_VALIDATION")) return env;
  return data_root() / "results" / "paper-validation.json";
}

}  // namespace ptdp
