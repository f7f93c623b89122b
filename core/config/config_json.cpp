// Config files read: {"model": {...}, "plan": {...}, "machine": "name" | {...},
// "optimizer": {...}}, each section by its field table (json_fields.h). Readers
// collect every error and throw ConfigRefused once.
#include <cstdlib>

#include "core/config/bounds.h"
#include "core/config/config.h"
#include "core/config/data_root.h"
#include "core/config/json_fields.h"
#include "core/config/json_read.h"

namespace ptdp {

using nlohmann::json;

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
  read_field(top, {.key = "model", .required = true}, c.model);  // each section by its field table
  read_field(top, {.key = "plan", .required = true}, c.plan);
  read_field(top, {.key = "optimizer"}, c.optimizer);
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
  if (c.plan.distributed_optimizer_alias && !c.plan.shards_optimizer()) c.plan.dp_sharding = DpSharding::optimizer;
  c.plan.distributed_optimizer_alias = false;
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
