// validate(): every rule checkable before anything launches, each broken one
// reported with its field and the rule in words.
#include <cmath>
#include <cstdio>
#include <string>

#include "core/config/bounds.h"
#include "core/config/config.h"
#include "core/schedule/registry.h"

namespace ptdp {

namespace {

class Rules {
 public:
  explicit Rules(ConfigErrors& errors) : errors_(errors) {}

  void at_most(const std::string& field, long long value, long long bound, const std::string& unit = "") {
    if (value > bound)
      fail(field, field + "=" + (value == INT64_MAX ? "more than 2^63" : std::to_string(value)) + unit +
                      " must be at most " + std::to_string(bound));
  }
  // x in the interval from lo to hi, each end open or closed, and finite; the message states the interval.
  void in_range(const std::string& field, double x, double lo, bool lo_open, double hi, bool hi_open) {
    const bool above = lo_open ? x > lo : x >= lo, below = hi_open ? x < hi : x <= hi;
    if (!(std::isfinite(x) && above && below))
      fail(field, field + "=" + text(x) + " must be in " + (lo_open ? "(" : "[") + text(lo) + ", " + text(hi) +
                      (hi_open ? ")" : "]"));
  }
  // `divisor_field`=divisor must divide `field`=value.
  void divides(const std::string& divisor_field, long long divisor, const std::string& field,
               long long value) {
    if (divisor > 0 && value > 0 && value % divisor != 0)
      fail(divisor_field, divisor_field + "=" + std::to_string(divisor) + " does not divide " + field +
                              "=" + std::to_string(value));
  }
  // `value` within a field table's bound (core/config/field.h): a count positive
  // (or 0 where the bound says what 0 stands for) and at most its maximum.
  void bounded(const std::string& field, const Bound& b, auto value) {
    if (b.kind == Bound::Kind::interval)
      return in_range(field, static_cast<double>(value), b.lo, b.lo_open, b.hi, b.hi_open);
    if (b.kind != Bound::Kind::count) return;
    const auto n = static_cast<long long>(value);
    if (!b.zero.empty() && n < 0) fail(field, field + " must be >= 0 (0: " + std::string(b.zero) + ")");
    if (b.zero.empty() && n <= 0) fail(field, field + "=" + std::to_string(n) + " must be positive");
    at_most(field, n, b.max);
  }
  void fail(const std::string& field, const std::string& message) { errors_.push_back({field, message}); }
  static std::string text(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
  }

 private:

  ConfigErrors& errors_;
};

template <class T>
void check_value(const std::string& at, const Field& field, const T& value, Rules& r);

// Every bound of `s`'s field table, each field named `path`.KEY.
template <HasFields S>
void check_fields(const S& s, const std::string& path, Rules& r) {
  visit_fields(s, [&](const Field& field, const auto& value) {
    check_value(path + "." + std::string(field.key), field, value, r);
  });
}

// A number against its bound (where it applies), a struct by its table, an
// optional one when present, a map entry by entry ("machine.peak_tflops.fp32").
template <class T>
void check_value(const std::string& at, const Field& field, const T& value, Rules& r) {
  if constexpr (HasFields<T>) {
    check_fields(value, at, r);
  } else if constexpr (kIsOptional<T>) {
    if (value) check_value(at, field, *value, r);
  } else if constexpr (kIsMap<T>) {
    for (const auto& [key, item] : value) check_value(at + "." + key, field, item, r);
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    if (field.applies) r.bounded(at, field.bound, value);
  }
}

// The model's rules across fields (its fields' bounds are its table's).
void check_model(const Model& m, Rules& r) {
  r.divides("model.heads", m.heads, "model.hidden", m.hidden);
  r.divides("model.kv_heads", m.kv_heads, "model.heads", m.heads);
  if (m.position == Position::rope && m.heads > 0 && m.hidden % m.heads == 0 && m.head_dim() % 2 != 0)
    r.fail("model.position", "model.position=\"rope\" rotates pairs of a head's dimensions: the head dimension "
                             "model.hidden/model.heads = " + std::to_string(m.head_dim()) + " must be even");
}

// Grouped-query attention over t: the key/value heads split over the
// tensor-parallel ranks when t <= kv_heads, each replicated on t/kv_heads ranks otherwise.
void check_kv_split(const Model& m, const Plan& p, Rules& r) {
  const int g = m.kv();
  if (p.tp <= 0 || g <= 0) return;
  if (p.tp <= g) r.divides("plan.tp", p.tp, "model.kv_heads", g);
  else if (p.tp % g != 0)
    r.fail("model.kv_heads", "model.kv_heads=" + std::to_string(g) + " does not divide plan.tp=" +
                                 std::to_string(p.tp) + " (more tensor-parallel ranks than key/value heads "
                                 "replicate each of them on plan.tp/model.kv_heads ranks)");
}

// Products of sizes, in 64 bits: the ranks, and the elements of the largest
// tensors (an activation (b, s, h) or (b, s, f), the scores (b, a, s, s), the
// weights (h, f) and (V, h)).
void check_products(const Model& m, const Plan& p, Rules& r) {
  const auto product = [](std::initializer_list<std::int64_t> f) {
    for (const auto x : f)
      if (x <= 0) return std::int64_t{0};  // already refused as a size
    return saturating_product(f);
  };
  r.at_most("plan.tp·plan.pp·plan.dp", product({p.tp, p.pp, p.dp}), kMaxRanks, " ranks");
  const std::int64_t b = p.micro_batch, s = m.seq_len, h = m.hidden, f = m.ffn(), a = m.heads, v = m.padded_vocab();
  r.at_most("plan.micro_batch·model.seq_len·model.hidden", product({b, s, h}), kMaxElements, " elements");
  r.at_most("plan.micro_batch·model.seq_len·model.ffn_hidden", product({b, s, f}), kMaxElements, " elements");
  r.at_most("plan.micro_batch·model.heads·model.seq_len²", product({b, a, s, s}), kMaxElements, " elements");
  r.at_most("model.hidden·model.ffn_hidden", product({h, f}), kMaxElements, " elements");
  r.at_most("model.vocab·model.hidden", product({v, h}), kMaxElements, " elements");
}

// The padded vocabulary (model.vocab rounded up to model.vocab_pad_to) splits over t.
void check_vocab_split(const Model& m, const Plan& p, Rules& r) {
  if (m.vocab_pad_to < 1) return;  // refused by its bound
  if (m.vocab_pad_to == 1) {
    r.divides("plan.tp", p.tp, "model.vocab", m.vocab);
  } else if (p.tp > 0 && m.vocab > 0 && m.padded_vocab() % p.tp != 0) {
    r.fail("model.vocab_pad_to", "model.vocab_pad_to=" + std::to_string(m.vocab_pad_to) + " pads model.vocab=" +
                                     std::to_string(m.vocab) + " to " + std::to_string(m.padded_vocab()) +
                                     ", which plan.tp=" + std::to_string(p.tp) + " does not divide");
  }
}

// An uneven split: one positive count per virtual stage, adding up to the model's layers
// (so l need not divide by p·v).
void check_layer_split(const Model& m, const Plan& p, Rules& r) {
  const std::string field = "plan.layers_per_stage";
  const long long stages = static_cast<long long>(p.pp) * p.virtual_stages;
  const long long n = static_cast<long long>(p.layers_per_stage.size());
  if (p.pp > 0 && p.virtual_stages > 0 && n != stages)
    r.fail(field, field + " has " + std::to_string(n) + " entries; it needs one per virtual stage, plan.pp·"
                  "plan.virtual_stages = " + std::to_string(stages));
  long long sum = 0;
  for (long long i = 0; i < n; ++i) {
    const int layers = p.layers_per_stage[static_cast<std::size_t>(i)];
    if (layers <= 0)
      r.fail(field, field + "[" + std::to_string(i) + "]=" + std::to_string(layers) + " must be positive");
    sum += layers;
  }
  if (sum != m.layers)
    r.fail(field, field + " sums to " + std::to_string(sum) + ", not model.layers=" + std::to_string(m.layers));
}

void check_splits(const Model& m, const Plan& p, Rules& r) {
  r.divides("plan.tp", p.tp, "model.heads", m.heads);
  r.divides("plan.tp", p.tp, "model.hidden", m.hidden);
  r.divides("plan.tp", p.tp, m.activation == Activation::swiglu ? "model.ffn_hidden (swiglu)" : "model.ffn_hidden",
            m.ffn());
  check_kv_split(m, p, r);
  check_vocab_split(m, p, r);
  if (p.sequence_parallel) r.divides("plan.tp", p.tp, "model.seq_len (sequence_parallel)", m.seq_len);
  if (p.tp_comm_overlap && !p.sequence_parallel)
    r.fail("plan.tp_comm_overlap", "plan.tp_comm_overlap needs plan.sequence_parallel: it pipelines sequence "
                                   "parallelism's all-gathers and reduce-scatters with the GEMMs");
  if (!p.layers_per_stage.empty()) check_layer_split(m, p, r);
  else if (p.pp > 0 && p.virtual_stages > 0)
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

// The learning-rate schedule's rules across fields (Megatron-LM asserts the
// same): it starts at or below lr and ends at or below it, the decay ends after
// the warmup, the WSD anneal fits in the decay, and no decay length is given
// to a style that would ignore it.
void check_lr_schedule(const OptimizerConfig& o, Rules& r) {
  if (o.min_lr > o.lr)
    r.fail("optimizer.min_lr", "optimizer.min_lr=" + Rules::text(o.min_lr) + " must be at most optimizer.lr=" + Rules::text(o.lr));
  if (o.lr_warmup_init > o.lr)
    r.fail("optimizer.lr_warmup_init",
           "optimizer.lr_warmup_init=" + Rules::text(o.lr_warmup_init) + " must be at most optimizer.lr=" + Rules::text(o.lr));
  const bool decays = o.lr_decay_style != LrDecayStyle::constant, wsd = o.lr_decay_style == LrDecayStyle::wsd;
  const std::string style = "optimizer.lr_decay_style=\"" + spelling(o.lr_decay_style) + "\"";
  if (!decays && o.lr_decay_iters != 0)
    r.fail("optimizer.lr_decay_iters", "optimizer.lr_decay_iters=" + std::to_string(o.lr_decay_iters) +
                                           " has no effect with " + style + ": name a decay style or leave it out");
  if (decays && o.lr_decay_iters > 0 && o.lr_decay_iters <= o.lr_warmup_iters)
    r.fail("optimizer.lr_decay_iters", "optimizer.lr_decay_iters=" + std::to_string(o.lr_decay_iters) +
                                           " must be above optimizer.lr_warmup_iters=" +
                                           std::to_string(o.lr_warmup_iters) + " (the decay follows the warmup)");
  if (!wsd && o.lr_wsd_decay_iters != 0)
    r.fail("optimizer.lr_wsd_decay_iters", "optimizer.lr_wsd_decay_iters=" + std::to_string(o.lr_wsd_decay_iters) +
                                               " has no effect with " + style + ": it needs \"WSD\"");
  const int decay_span = o.lr_decay_iters - o.lr_warmup_iters;
  if (wsd && o.lr_wsd_decay_iters > 0 && decay_span > 0 && o.lr_wsd_decay_iters > decay_span)
    r.fail("optimizer.lr_wsd_decay_iters",
           "optimizer.lr_wsd_decay_iters=" + std::to_string(o.lr_wsd_decay_iters) +
               " must be at most optimizer.lr_decay_iters - optimizer.lr_warmup_iters = " + std::to_string(decay_span));
}

// A band's source says where its expected value comes from: not blank.
void check_sources(const std::string& at, const std::map<std::string, AcceptanceBand>& bands, Rules& r) {
  for (const auto& [metric, band] : bands)
    if (band.source.find_first_not_of(" \t") == std::string::npos)
      r.fail(at + metric + ".source", at + metric + ".source must say where the expected value comes from");
}

}  // namespace

ConfigErrors validate(const Config& c, int world_size) {
  ConfigErrors errors;
  Rules r(errors);
  check_fields(c.model, "model", r);
  check_fields(c.plan, "plan", r);
  check_model(c.model, r);
  check_products(c.model, c.plan, r);
  check_splits(c.model, c.plan, r);
  check_schedule(c.plan, r);
  check_fields(c.optimizer, "optimizer", r);
  check_lr_schedule(c.optimizer, r);
  if (world_size > 0 && c.plan.world_size() != world_size)
    r.fail("plan.tp·plan.pp·plan.dp",
           "plan.tp·plan.pp·plan.dp = " + std::to_string(c.plan.world_size()) +
               " does not equal the number of processes (" + std::to_string(world_size) + ")");
  return errors;
}

// Every bound of the profile's field tables, and the rules across fields.
ConfigErrors validate(const Machine& m, const std::string& path) {
  ConfigErrors errors;
  Rules r(errors);
  const std::string at = path + ".";
  if (const std::string why = file_name_problem(m.name); !why.empty()) r.fail(at + "name", at + "name " + why);
  check_fields(m, path, r);
  if (m.memory_reserved_bytes < 0 || (m.memory_bytes > 0 && m.memory_reserved_bytes >= m.memory_bytes))
    r.fail(at + "memory_reserved_bytes", at + "memory_reserved_bytes=" + std::to_string(m.memory_reserved_bytes) +
                                             " must be >= 0 and below " + at + "memory_bytes");
  if (m.peak_tflops.empty()) r.fail(at + "peak_tflops", at + "peak_tflops must give at least one precision's peak");
  check_sources(at + "acceptance.", m.acceptance, r);
  return errors;
}

}  // namespace ptdp
