// Config reading and validation: every rule refused with its field named,
// unknown keys, missing fields, wrong types, unknown machines.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/config/config.h"
#include "tests/config_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

json tiny() {
  return json::parse(R"({
    "model": {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 128},
    "plan": {"tp": 1, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 8, "precision": "fp32"},
    "machine": "cpu-host"})");
}

std::filesystem::path machines() { return test::machines_dir(); }
ConfigErrors problems(const json& j, int world = 0) { return test::config_problems(j, world); }
using test::refused;

TEST(Config, TinyIsValidAndResolvesDefaults) {
  const Config c = config_from_json(tiny(), machines());
  EXPECT_TRUE(validate(c, 1).empty()) << test::errors_text(validate(c, 1));
  EXPECT_EQ(c.model.ffn_hidden, 256);  // 4·h
  EXPECT_EQ(c.plan.schedule, "1f1b");
  EXPECT_EQ(c.plan.micro_batches(), 4);
  EXPECT_EQ(c.machine.name, "cpu-host");
}

TEST(Config, RoundTripsThroughJson) {
  const Config c = config_from_json(tiny(), machines());
  json again = to_json(c);
  const Config d = config_from_json(again, machines());
  EXPECT_EQ(to_json(d), again);
}

// Megatron-LM's "distributed_optimizer": true reads as dp_sharding "optimizer"
// (never lowering a stronger sharding) and is written as dp_sharding only.
TEST(Config, DistributedOptimizerIsReadAsShardingTheOptimizer) {
  json j = tiny();
  j["plan"]["distributed_optimizer"] = true;
  const Config c = config_from_json(j, machines());
  EXPECT_EQ(c.plan.dp_sharding, DpSharding::optimizer);
  EXPECT_FALSE(to_json(c)["plan"].contains("distributed_optimizer"));
  EXPECT_EQ(to_json(c)["plan"]["dp_sharding"], "optimizer");
  j["plan"]["dp_sharding"] = "parameters";
  EXPECT_EQ(config_from_json(j, machines()).plan.dp_sharding, DpSharding::parameters);
  j["plan"]["dp_sharding"] = "everything";
  EXPECT_TRUE(refused(problems(j), "plan.dp_sharding")) << test::errors_text(problems(j));
}

TEST(Config, HeadsNotDivisibleByTpNamesBoth) {
  json j = tiny();
  j["model"]["heads"] = 6;
  j["model"]["hidden"] = 96;
  j["plan"]["tp"] = 4;
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "plan.tp", {"plan.tp=4", "model.heads=6"})) << test::errors_text(e);
}

TEST(Config, EachDivisibilityRuleNamesItsField) {
  struct Case {
    const char* section;
    const char* key;
    int value;
    const char* field;
    const char* words;
  };
  const Case cases[] = {
      {"model", "hidden", 66, "model.heads", "model.hidden=66"},
      {"plan", "global_batch", 7, "plan.micro_batch·plan.dp", "plan.global_batch=7"},
      {"model", "layers", 3, "plan.pp·plan.virtual_stages", "model.layers=3"},
  };
  for (const auto& c : cases) {
    json j = tiny();
    j[c.section][c.key] = c.value;
    if (std::string(c.key) == "layers") j["plan"]["pp"] = 2;
    const auto e = problems(j);
    EXPECT_TRUE(refused(e, c.field, {c.words})) << c.key << "\n" << test::errors_text(e);
  }
}

TEST(Config, NonPositiveSizesAreRefused) {
  for (const char* key : {"layers", "hidden", "heads", "seq_len", "vocab"}) {
    json j = tiny();
    j["model"][key] = 0;
    EXPECT_TRUE(refused(problems(j), std::string("model.") + key, {"must be positive"})) << key;
  }
  for (const char* key : {"tp", "pp", "dp", "micro_batch", "global_batch", "virtual_stages"}) {
    json j = tiny();
    j["plan"][key] = -1;
    EXPECT_TRUE(refused(problems(j), std::string("plan.") + key, {"must be positive"})) << key;
  }
}

TEST(Config, UnknownEnumValuesAreRefused) {
  json j = tiny();
  j["plan"]["schedule"] = "zigzag";  // a rule of validate(), checked once the file reads
  EXPECT_TRUE(refused(problems(j), "plan.schedule", {"zigzag", "1f1b"})) << test::errors_text(problems(j));
  j["plan"]["recompute"] = "some";   // reading errors, all reported together
  j["plan"]["precision"] = "fp8";
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "plan.recompute", {"some", "selective"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "plan.precision", {"fp8", "bf16"})) << test::errors_text(e);
}

TEST(Config, UnknownKeysAreRefusedAtEveryLevel) {
  json j = tiny();
  j["extra"] = 1;
  j["model"]["hiden"] = 64;
  j["plan"]["tensor_parallel"] = 2;
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "extra", {"not a known field"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "model.hiden", {"not a known field"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "plan.tensor_parallel", {"not a known field"})) << test::errors_text(e);
}

TEST(Config, MissingFieldsAndWrongTypesAreAllReported) {
  json j = tiny();
  j["model"].erase("vocab");
  j["plan"]["tp"] = "two";
  j["plan"]["micro_batch"] = 1.5;
  j.erase("machine");
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "model.vocab", {"missing"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "plan.tp", {"must be an integer"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "plan.micro_batch", {"must be an integer"})) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "machine", {"missing"})) << test::errors_text(e);
  EXPECT_GE(e.size(), 4u);
}

TEST(Config, UnknownMachineListsTheKnownOnes) {
  json j = tiny();
  j["machine"] = "dgx-z9000";
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "machine", {"dgx-z9000", "cpu-host"})) << test::errors_text(e);
}

TEST(Config, InlineMachineObjectIsTakenAsIs) {
  json j = tiny();
  j["machine"] = {{"name", "mine"},
                  {"gpus_per_node", 4},
                  {"memory_bandwidth_gbs", 1000.0},
                  {"peak_tflops", {{"bf16", 100.0}}},
                  {"intra_node", {{"bandwidth_gbs", 100.0}, {"latency_us", 1.0}}},
                  {"inter_node", {{"bandwidth_gbs", 10.0}, {"latency_us", 5.0}}}};
  const Config c = config_from_json(j, machines());
  EXPECT_EQ(c.machine.name, "mine");
  EXPECT_EQ(c.machine.gpus_per_node, 4);
  EXPECT_DOUBLE_EQ(c.machine.peak_for("bf16"), 100.0);
  EXPECT_DOUBLE_EQ(c.machine.peak_for("fp8"), 0.0);
}

TEST(Config, VirtualStagesNeedAnInterleavedSchedule) {
  json j = tiny();
  j["plan"]["virtual_stages"] = 2;
  EXPECT_TRUE(refused(problems(j), "plan.virtual_stages", {"interleaved"}));
  j["plan"]["schedule"] = "zb-h1";  // zero bubble is built for v = 1 only
  EXPECT_TRUE(refused(problems(j), "plan.virtual_stages", {"zb-h1"}));
  j["plan"]["schedule"] = "zb-h2";
  EXPECT_TRUE(refused(problems(j), "plan.virtual_stages", {"zb-h2"}));
}

TEST(Config, WorldSizeMustEqualTpTimesPpTimesDp) {
  const auto e = problems(tiny(), 3);
  EXPECT_TRUE(refused(e, "plan.tp·plan.pp·plan.dp", {"3"})) << test::errors_text(e);
}

TEST(Config, OptimizerRangesAreChecked) {
  json j = tiny();
  j["optimizer"] = {{"lr", -1.0}, {"beta2", 1.0}, {"clip_grad", -2.0}};
  const auto e = problems(j);
  EXPECT_TRUE(refused(e, "optimizer.lr")) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "optimizer.beta2")) << test::errors_text(e);
  EXPECT_TRUE(refused(e, "optimizer.clip_grad")) << test::errors_text(e);
}

TEST(Config, TpCommOverlapNeedsSequenceParallelism) {
  json j = tiny();
  j["plan"]["tp_comm_overlap"] = true;
  EXPECT_TRUE(refused(problems(j), "plan.tp_comm_overlap", {"sequence_parallel"}));
  j["plan"]["sequence_parallel"] = true;
  EXPECT_TRUE(problems(j).empty()) << test::errors_text(problems(j));
}

}  // namespace
}  // namespace ptdp

namespace ptdp {
namespace {

// Callers (the sweep loader) branch on the kind, so each reader error must carry the right one.
TEST(Config, ErrorsCarryTheirKind) {
  json j = tiny();
  j["plan"]["tpp"] = 1;        // unknown
  j["model"].erase("layers");  // missing
  j["plan"]["tp"] = "two";     // wrong type
  const ConfigErrors e = problems(j);
  const auto kind_of = [&](const std::string& field) {
    for (const auto& x : e)
      if (x.field == field) return x.kind;
    ADD_FAILURE() << "no error names " << field << "\n" << test::errors_text(e);
    return ConfigErrorKind::rule;
  };
  EXPECT_EQ(kind_of("plan.tpp"), ConfigErrorKind::unknown_field);
  EXPECT_EQ(kind_of("model.layers"), ConfigErrorKind::missing);
  EXPECT_EQ(kind_of("plan.tp"), ConfigErrorKind::type);
}

TEST(Config, MachineNamesItsDeviceKind) {
  EXPECT_EQ(load_machine("cpu-host", machines()).device, Device::cpu);
  EXPECT_EQ(load_machine("a100-80gb", machines()).device, Device::cuda);
  json m = to_json(load_machine("cpu-host", machines()));
  EXPECT_EQ(m["device"], "cpu");
  EXPECT_EQ(machine_from_json(m, "machine").device, Device::cpu);
  m["device"] = "tpu";
  try {
    machine_from_json(m, "machine");
    ADD_FAILURE() << "device \"tpu\" was accepted";
  } catch (const ConfigRefused& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].field, "machine.device");
    EXPECT_EQ(e.errors()[0].kind, ConfigErrorKind::type);
  }
}

}  // namespace
}  // namespace ptdp
