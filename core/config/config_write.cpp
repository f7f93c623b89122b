// Configs out to JSON: the resolved values, echoed into every result.
#include "core/config/config.h"

namespace ptdp {

using nlohmann::json;

json to_json(const Model& m) {
  return {{"layers", m.layers}, {"hidden", m.hidden},   {"heads", m.heads},
          {"seq_len", m.seq_len}, {"vocab", m.vocab}, {"ffn_hidden", m.ffn()}, {"dropout", m.dropout},
          {"vocab_pad_to", m.vocab_pad_to}, {"kv_heads", m.kv()}, {"norm", to_string(m.norm)},
          {"activation", to_string(m.activation)}, {"position", to_string(m.position)},
          {"rope_theta", m.rope_theta}, {"bias", m.bias}, {"tied_embeddings", m.tied_embeddings}};
}

json to_json(const Plan& p) {
  json j = {{"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"virtual_stages", p.virtual_stages},
          {"micro_batch", p.micro_batch},
          {"global_batch", p.global_batch},
          {"schedule", p.schedule},
          {"recompute", to_string(p.recompute)},
          {"sequence_parallel", p.sequence_parallel},
          {"scatter_gather", p.scatter_gather},
          {"tp_comm_overlap", p.tp_comm_overlap},
          {"precision", to_string(p.precision)},
          {"seed", p.seed},
          {"fused_ops", p.fused_ops},
          {"attention", to_string(p.attention)},
          {"distributed_optimizer", p.distributed_optimizer},
          {"overlap_grad_reduce", p.overlap_grad_reduce},
          {"overlap_param_gather", p.overlap_param_gather},
          {"grad_accumulation_fusion", p.grad_accumulation_fusion},
          {"deterministic", p.deterministic}};
  if (!p.layers_per_stage.empty()) j["layers_per_stage"] = p.layers_per_stage;  // absent: the even split
  return j;
}

json to_json(const OptimizerConfig& o) {
  return {{"lr", o.lr},   {"beta1", o.beta1}, {"beta2", o.beta2}, {"eps", o.eps},
          {"weight_decay", o.weight_decay}, {"clip_grad", o.clip_grad}};
}

json to_json(const Config& c) {
  return {{"model", to_json(c.model)},
          {"plan", to_json(c.plan)},
          {"machine", to_json(c.machine)},
          {"optimizer", to_json(c.optimizer)}};
}

}  // namespace ptdp
