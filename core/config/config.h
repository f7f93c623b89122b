// One run's configuration: model, plan, machine, optimizer; JSON in and out,
// and validation that names every broken rule with its field.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/machine.h"
#include "core/config/model.h"
#include "core/config/plan.h"

namespace ptdp {

// How the learning rate decays after the warmup (Megatron-LM's
// --lr-decay-style); WSD holds lr, then anneals over the last
// lr_wsd_decay_iters of the decay in the lr_wsd_decay_style.
enum class LrDecayStyle : std::uint8_t { constant, linear, cosine, wsd };
enum class WsdDecayStyle : std::uint8_t { exponential, linear, cosine, minus_sqrt };
inline constexpr std::string_view kLrDecayStyleNames[] = {"constant", "linear", "cosine", "WSD"};
inline constexpr std::string_view kWsdDecayStyleNames[] = {"exponential", "linear", "cosine", "minus_sqrt"};
inline std::span<const std::string_view> spellings(LrDecayStyle) { return kLrDecayStyleNames; }
inline std::span<const std::string_view> spellings(WsdDecayStyle) { return kWsdDecayStyleNames; }

// Optimizer settings (optional "optimizer" section of a config file); each
// field's JSON key, bound and meaning: visit_fields below. The learning-rate
// schedule's fields carry Megatron-LM's names; lr_at (core/optim/lr_schedule.h)
// reads them. The default is a constant lr with no warmup.
struct OptimizerConfig {
  double lr = 1e-3;
  double min_lr = 0;
  double lr_warmup_init = 0;
  int lr_warmup_iters = 0;
  int lr_decay_iters = 0;
  LrDecayStyle lr_decay_style = LrDecayStyle::constant;
  int lr_wsd_decay_iters = 0;
  WsdDecayStyle lr_wsd_decay_style = WsdDecayStyle::exponential;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.01;
  double clip_grad = 1.0;
};

// The field table of "optimizer" (core/config/field.h), in reading order. A
// step of lr·(update) with lr above 1 moves weights by more than their scale:
// nonsense, not a setting. An lr of 0 leaves the weights as they are (weight
// decay is scaled by lr too): a run that only evaluates. The rules across the
// schedule's fields (min_lr <= lr, decay ends after the warmup, ...) are validate()'s.
template <FieldsOf<OptimizerConfig> M, class Visit>
void visit_fields(M& o, Visit&& v) {
  const bool decays = o.lr_decay_style != LrDecayStyle::constant;
  const bool wsd = o.lr_decay_style == LrDecayStyle::wsd;
  v({.key = "lr", .description = "AdamW peak learning rate: reached after the warmup, held by the constant style",
     .bound = interval(0, false, 1, false)}, o.lr);
  v({.key = "min_lr", .description = "learning rate the decay ends at, held after lr_decay_iters",
     .bound = interval(0, false, 1, false)}, o.min_lr);
  v({.key = "lr_warmup_init", .description = "learning rate of iteration 0, rising linearly to lr over the warmup",
     .bound = interval(0, false, 1, false)}, o.lr_warmup_init);
  v({.key = "lr_warmup_iters", .description = "iterations of linear warmup from lr_warmup_init to lr",
     .bound = count(kMaxSize, "no warmup")}, o.lr_warmup_iters);
  v({.key = "lr_decay_style", .description = "after the warmup: constant, linear, cosine or WSD (warmup-stable-decay)"},
    o.lr_decay_style);
  v({.key = "lr_decay_iters", .description = "iteration (from 0, warmup included) at which the decay reaches min_lr",
     .bound = count(kMaxSize), .when = "lr_decay_style is not \"constant\"",
     .applies = decays}, o.lr_decay_iters);
  v({.key = "lr_wsd_decay_iters", .description = "WSD: iterations of the anneal that ends at lr_decay_iters",
     .bound = count(kMaxSize), .when = "lr_decay_style is \"WSD\"", .applies = wsd},
    o.lr_wsd_decay_iters);
  v({.key = "lr_wsd_decay_style", .description = "WSD: the anneal's shape: exponential, linear, cosine or minus_sqrt"},
    o.lr_wsd_decay_style);
  v({.key = "beta1", .description = "first-moment decay", .bound = interval(0, false, 1, true)}, o.beta1);
  v({.key = "beta2", .description = "second-moment decay", .bound = interval(0, false, 1, true)}, o.beta2);
  v({.key = "eps", .description = "denominator epsilon", .bound = interval(0, true, 1, false)}, o.eps);
  v({.key = "weight_decay", .description = "decoupled decay on weight matrices (not biases, norms)",
     .bound = interval(0, false, 1, false)}, o.weight_decay);
  v({.key = "clip_grad", .description = "clip the global gradient norm to this; 0 disables",
     .bound = interval(0, false, kMaxClipGrad, false)}, o.clip_grad);
}

struct Config {
  Model model;
  Plan plan;
  Machine machine;
  OptimizerConfig optimizer;
};

// What kind of problem a ConfigError is: callers branch on this, never on the text.
enum class ConfigErrorKind : std::uint8_t {
  unknown_field,  // a key no reader asked for
  missing,        // a required key is absent
  type,           // wrong JSON type, or a value outside its type (negative count, bad spelling)
  rule,           // a well-typed value breaks a rule (divisibility, memory, compatibility)
};

// One broken rule: the field it concerns ("plan.tp"), a sentence naming the rule, and its kind.
struct ConfigError {
  std::string field;
  std::string message;
  ConfigErrorKind kind = ConfigErrorKind::rule;
};
using ConfigErrors = std::vector<ConfigError>;

// Thrown by the readers when input is refused; carries every error found.
class ConfigRefused : public std::runtime_error {
 public:
  explicit ConfigRefused(ConfigErrors errors);
  const ConfigErrors& errors() const { return errors_; }

 private:
  ConfigErrors errors_;
};

// The machine of a config that names none: empty, such a config is refused
// ("machine is missing": projections and sweeps need a profile); `ptdp train`
// passes the machine at hand (core/config/hardware.h), which throws
// ConfigRefused when no profile fits the hardware.
using MachineAtHand = std::function<Machine()>;

// Parse a config object; unknown keys, missing fields and wrong types are errors.
// A machine given by name is looked up in machines_dir/<name>.json.
Config config_from_json(const nlohmann::json& j, const std::filesystem::path& machines_dir,
                        const MachineAtHand& at_hand = {});
Config load_config(const std::filesystem::path& file, const std::filesystem::path& machines_dir,
                   const MachineAtHand& at_hand = {});
Machine load_machine(const std::string& name, const std::filesystem::path& machines_dir);
// Reads and validates a profile; ConfigRefused with every problem, fields named from `where`.
Machine machine_from_json(const nlohmann::json& j, const std::string& where);
// Why `name` cannot be the stem of a file ptdp opens or writes (a machine
// profile <name>.json, a sweep's results/<name>.json), "" when it can: 1 to
// kMaxFileName characters of A-Z a-z 0-9 . _ -, not starting with '.'.
std::string file_name_problem(const std::string& name);
inline constexpr std::size_t kMaxFileName = 100;
// Parses a JSON file; ConfigRefused naming `what` when it cannot be read or parsed.
nlohmann::json parse_json_file(const std::filesystem::path& file, const std::string& what);

nlohmann::json to_json(const Model& m);
nlohmann::json to_json(const Plan& p);
nlohmann::json to_json(const Machine& m);
nlohmann::json to_json(const std::optional<Filesystem>& fs);  // null when unknown
nlohmann::json to_json(const OptimizerConfig& o);
nlohmann::json to_json(const Config& c);

// Every rule checkable without running. world_size > 0 also checks t·p·d against it.
// The machine is checked when read (machine_from_json), not here.
ConfigErrors validate(const Config& c, int world_size = 0);
// A machine profile's rules: rates and bandwidths positive and finite,
// efficiencies in (0, 1], latencies >= 0, sizes bounded; fields named from `path`.
ConfigErrors validate(const Machine& m, const std::string& path);

// The folder of machine profiles: $PTDP_MACHINES, else <data>/sweeps/machines (data_root.h).
std::filesystem::path default_machines_dir();
// The committed paper validation (`ptdp validate --out`), whose per-point errors
// give every projection its expected error: $PTDP_VALIDATION, else
// <data>/results/paper-validation.json.
std::filesystem::path default_validation_file();

}  // namespace ptdp
