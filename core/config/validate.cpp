// validate(): every rule checkable before anything launches, each broken one
// reported with its field and the rule in words.
#include <string>

#include "core/config/config.h"
#include "core/schedule/registry.h"

namespace ptdp {

namespace {

class Rules {
 public:
  explicit Rules(ConfigErrors& errors) : errors_(errors) {}

  void positive(const std::string& field, long long value) {
    if (value <= 0) fail(field, field + "=" + std::to_string(value) + " must be positive");
  }
  // `divisor_field`=divisor must divide `field`=value.
  void divides(const std::string& divisor_field, long long divisor, const std::string& field,
               long long value) {
    if (divisor > 0 && value > 0 && value % divisor != 0)
      fail(divisor_field, divisor_field + "=" + std::to_string(divisor) + " does not divide " + field +
                              "=" + std::to_string(value));
  }
  void fail(const std::string& field, const std::string& message) { errors_.push_back({field, message}); }

 private:
  ConfigErrors& errors_;
};

void check_model(const Model& m, Rules& r) {
  r.positive("model.layers", m.layers);
  r.positive("model.hidden", m.hidden);
  r.positive("model.heads", m.heads);
  r.positive("model.seq_len", m.seq_len);
  r.positive("model.vocab", m.vocab);
  if (m.ffn_hidden < 0) r.fail("model.ffn_hidden", "model.ffn_hidden must be positive (or 0 for 4·hidden)");
  r.divides("model.heads", m.heads, "model.hidden", m.hidden);
  if (!(m.dropout >= 0 && m.dropout < 1)) r.fail("model.dropout", "model.dropout must be in [0, 1)");
}

void check_plan_sizes(const Plan& p, Rules& r) {
  r.positive("plan.tp", p.tp);
  r.positive("plan.pp", p.pp);
  r.positive("plan.dp", p.dp);
  r.positive("plan.virtual_stages", p.virtual_stages);
  r.positive("plan.micro_batch", p.micro_batch);
  r.positive("plan.global_batch", p.global_batch);
}

// The padded vocabulary (model.vocab rounded up to model.vocab_pad_to) splits over t.
void check_vocab_split(const Model& m, const Plan& p, Rules& r) {
  if (m.vocab_pad_to < 1) {
    r.fail("model.vocab_pad_to", "model.vocab_pad_to=" + std::to_string(m.vocab_pad_to) +
                                     " must be at least 1 (1 disables vocabulary padding)");
  } else if (m.vocab_pad_to == 1) {
    r.divides("plan.tp", p.tp, "model.vocab", m.vocab);
  } else if (p.tp > 0 && m.vocab > 0 && m.padded_vocab() % p.tp != 0) {
    r.fail("model.vocab_pad_to", "model.vocab_pad_to=" + std::to_string(m.vocab_pad_to) + " pads model.vocab=" +
                                     std::to_string(m.vocab) + " to " + std::to_string(m.padded_vocab()) +
                                     ", which plan.tp=" + std::to_string(p.tp) + " does not divide");
  }
}

void check_splits(const Model& m, const Plan& p, Rules& r) {
  r.divides("plan.tp", p.tp, "model.heads", m.heads);
  r.divides("plan.tp", p.tp, "model.hidden", m.hidden);
  r.divides("plan.tp", p.tp, "model.ffn_hidden", m.ffn());
  check_vocab_split(m, p, r);
  if (p.sequence_parallel) r.divides("plan.tp", p.tp, "model.seq_len (sequence_parallel)", m.seq_len);
  if (p.pp > 0 && p.virtual_stages > 0)
    r.divides("plan.pp·plan.virtual_stages", static_cast<long long>(p.pp) * p.virtual_stages,
              "model.layers", m.layers);
  if (p.micro_batch > 0 && p.dp > 0)
    r.divides("plan.micro_batch·plan.dp", static_cast<long long>(p.micro_batch) * p.dp,
              "plan.global_batch", p.global_batch);
}

void check_schedule(const Plan& p, Rules& r) {
  const ScheduleInfo* info = find_schedule(p.schedule);
  if (info == nullptr) {
    std::string names;
    for (const auto& name : schedule_names()) names += (names.empty() ? "" : ", ") + name;
    r.fail("plan.schedule", "plan.schedule=\"" + p.schedule + "\" is not one of: " + names);
    return;
  }
  if (p.virtual_stages > 1 && p.pp == 1)
    r.fail("plan.virtual_stages", "plan.virtual_stages=" + std::to_string(p.virtual_stages) +
                                      " needs plan.pp >= 2 (interleaving spreads each rank's chunks over the pipeline)");
  if (p.virtual_stages > 1 && !info->interleaved)
    r.fail("plan.virtual_stages", "plan.virtual_stages=" + std::to_string(p.virtual_stages) +
                                      " needs an interleaved plan.schedule (got \"" + p.schedule + "\")");
  const int m = p.micro_batches();
  if (info->interleaved && p.pp > 0 && m > 0 && m % p.pp != 0)
    r.fail("plan.global_batch", "plan.schedule=\"" + p.schedule + "\" needs the micro-batch count m = "
                                "global_batch/(micro_batch·dp) = " + std::to_string(m) +
                                " to be a multiple of plan.pp=" + std::to_string(p.pp));
}

void check_optimizer(const OptimizerConfig& o, Rules& r) {
  if (!(o.lr > 0)) r.fail("optimizer.lr", "optimizer.lr must be positive");
  if (!(o.beta1 >= 0 && o.beta1 < 1)) r.fail("optimizer.beta1", "optimizer.beta1 must be in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) r.fail("optimizer.beta2", "optimizer.beta2 must be in [0, 1)");
  if (!(o.eps > 0)) r.fail("optimizer.eps", "optimizer.eps must be positive");
  if (!(o.weight_decay >= 0)) r.fail("optimizer.weight_decay", "optimizer.weight_decay must be >= 0");
  if (!(o.clip_grad >= 0)) r.fail("optimizer.clip_grad", "optimizer.clip_grad must be >= 0 (0 disables)");
}

void check_machine(const Machine& m, Rules& r) {
  r.positive("machine.gpus_per_node", m.gpus_per_node);
  if (m.memory_bytes < 0) r.fail("machine.memory_bytes", "machine.memory_bytes must be >= 0");
}

}  // namespace

ConfigErrors validate(const Config& c, int world_size) {
  ConfigErrors errors;
  Rules r(errors);
  check_model(c.model, r);
  check_plan_sizes(c.plan, r);
  check_splits(c.model, c.plan, r);
  check_schedule(c.plan, r);
  check_optimizer(c.optimizer, r);
  check_machine(c.machine, r);
  if (world_size > 0 && c.plan.world_size() != world_size)
    r.fail("plan.tp·plan.pp·plan.dp",
           "plan.tp·plan.pp·plan.dp = " + std::to_string(c.plan.world_size()) +
               " does not equal the number of processes (" + std::to_string(world_size) + ")");
  return errors;
}

}  // namespace ptdp
