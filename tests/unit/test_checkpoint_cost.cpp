// Checkpoint size (core/accounting/checkpoint_size.h) and the projected save and
// load times (core/sim/checkpoint_cost.h): the paper's 1T checkpoint of 13.8 TB
// (Section 5.10), who writes and reads what, the two limits of the
// filesystem model on Selene's profile, unknown filesystems, and refused
// filesystem fields.
#include <gtest/gtest.h>

#include "core/accounting/flops.h"
#include "core/results/result.h"
#include "core/sim/checkpoint_cost.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

// Table 1's 1T row (sweeps/table1.json) on Selene's profile.
Config gpt_1t(const std::string& machine = "a100-80gb") {
  Config c;
  c.model.layers = 128, c.model.hidden = 25600, c.model.heads = 160, c.model.seq_len = 2048, c.model.vocab = 51200;
  c.plan.tp = 8, c.plan.pp = 64, c.plan.dp = 6, c.plan.virtual_stages = 2;
  c.plan.micro_batch = 1, c.plan.global_batch = 3072, c.plan.schedule = "interleaved";
  c.plan.precision = Precision::fp16;
  c.machine = load_machine(machine, default_machines_dir());
  return c;
}

TEST(CheckpointSize, BytesPerParameterAreWeightsMastersAndTwoMoments) {
  EXPECT_EQ(checkpoint_bytes_per_parameter({2, true, true}), 2 + 4 + 4 + 4);  // 16-bit weights, fp32 masters, m, v
  EXPECT_EQ(checkpoint_bytes_per_parameter({4, false, true}), 4 + 4 + 4);     // fp32: the weights are the masters
}

TEST(CheckpointSize, The1TModelIsWithinThreePercentOfThePapers13Point8TB) {
  const CheckpointSize s = checkpoint_size(gpt_1t());
  EXPECT_EQ(s.bytes_per_parameter, 14);
  EXPECT_NEAR(static_cast<double>(s.bytes_total), 13.8e12, 0.03 * 13.8e12);
  // At least one copy of every parameter; more only by what ranks hold twice
  // (the last stage's tied embedding, layernorms and biases on every t rank).
  const double one_copy = 14.0 * static_cast<double>(parameter_count(gpt_1t().model));
  EXPECT_GE(static_cast<double>(s.bytes_total), one_copy);
  EXPECT_LE(static_cast<double>(s.bytes_total), 1.01 * one_copy);
  // Data-parallel rank 0 writes; the first stage (embedding) writes the most.
  EXPECT_EQ(s.saved_by(3, 1), 0);
  EXPECT_EQ(s.bytes_per_rank_max, s.saved_by(0, 0));
  EXPECT_EQ(s.loaded_by(3, 1), s.saved_by(3, 0));  // every replica reads the whole shard back
}

TEST(CheckpointSize, TheDistributedOptimizerSpreadsTheStateNotTheTotal) {
  Config c = gpt_1t();
  const CheckpointSize whole = checkpoint_size(c);
  c.plan.dp_sharding = DpSharding::optimizer;
  const CheckpointSize sharded = checkpoint_size(c);
  std::int64_t state = 0;
  for (int k = 0; k < c.plan.dp; ++k) state += sharded.saved_state(5, k);
  EXPECT_EQ(state, whole.saved_state(5, 0));  // the d slices add up to the shard
  EXPECT_GT(sharded.saved_by(5, 1), 0);
  EXPECT_LT(sharded.bytes_per_rank_max, whole.bytes_per_rank_max);
  // Only the metadata of the extra files differs.
  EXPECT_EQ(sharded.bytes_total - whole.bytes_total,
            std::int64_t{c.plan.tp} * c.plan.pp * (c.plan.dp - 1) * kCheckpointMetadataBytes);
}

TEST(CheckpointCost, SelenesFilesystemBindsThe1TSaveAndLoad) {
  const CheckpointCost c = checkpoint_cost(gpt_1t());
  ASSERT_TRUE(c.save && c.load);
  const double total = static_cast<double>(c.size.bytes_total);
  // Save: one copy, by the 64 nodes of data-parallel replica 0, at 40% of 682.5 GB/s.
  EXPECT_EQ(c.save->bound, "filesystem");
  EXPECT_EQ(c.save->nodes, 64);
  EXPECT_NEAR(c.save->seconds, total / (682.5e9 * 0.4), 1e-9 * c.save->seconds);
  EXPECT_NEAR(c.save->gbs(), 273, 1e-6);
  // Load: all 384 nodes, every replica its copy (6 of them), at the 1 TB/s peak.
  EXPECT_EQ(c.load->bound, "filesystem");
  EXPECT_EQ(c.load->nodes, 384);
  EXPECT_NEAR(c.load->seconds, 6 * total / 1e12, 1e-9 * c.load->seconds);
  EXPECT_NEAR(c.load->gbs(), 1000, 1e-6);
}

TEST(CheckpointCost, TheStorageNicsBindWhenTheFilesystemIsFaster) {
  Config cfg = gpt_1t();
  cfg.machine.filesystem->write_gbs = 1e5;  // 100 TB/s: the 50 GB/s per node binds
  const CheckpointCost c = checkpoint_cost(cfg);
  ASSERT_TRUE(c.save);
  EXPECT_EQ(c.save->bound, "node");
  // A node holds the 8 tensor-parallel ranks of one stage; the first stage's is the busiest.
  const double node = 8.0 * static_cast<double>(c.size.saved_by(0, 0));
  EXPECT_DOUBLE_EQ(c.save->node_bytes_max, node);
  EXPECT_NEAR(c.save->seconds, node / (50e9 * 0.4), 1e-9 * c.save->seconds);
}

TEST(CheckpointCost, AnUnknownFilesystemLeavesTheTimesNull) {
  const Config cfg = gpt_1t("h100-80gb");
  EXPECT_FALSE(cfg.machine.filesystem);
  const nlohmann::json j = to_json(projected_checkpoint(cfg));
  EXPECT_GT(j["bytes_total"].get<double>(), 1e13);
  for (const char* key : {"save_s", "load_s", "save_gbs", "load_gbs", "every", "save_share", "filesystem"})
    EXPECT_TRUE(j[key].is_null()) << key;
}

TEST(CheckpointCost, SavingEveryNIterationsCostsItsShareOfTrainingTime) {
  CheckpointMetrics m = projected_checkpoint(gpt_1t());
  set_checkpoint_interval(m, 100, 60.0);  // 100 iterations of a minute
  ASSERT_TRUE(m.save_share);
  EXPECT_DOUBLE_EQ(*m.save_share, *m.save_s / (6000.0 + *m.save_s));
  const nlohmann::json j = to_json(m);
  EXPECT_EQ(j["every"], 100);
  EXPECT_EQ(j["filesystem"]["save"]["bound"], "filesystem");
  // The block reads back as written (a result file's metrics).
  EXPECT_EQ(to_json(checkpoint_metrics_of(JsonAt(j, "test"))), j);
}

TEST(CheckpointCost, BadFilesystemFieldsAreRefusedByName) {
  const nlohmann::json good = to_json(load_machine("a100-80gb", default_machines_dir()));
  const auto refused_field = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json j = good;
    j["filesystem"][key] = value;
    try {
      machine_from_json(j, "machine");
    } catch (const ConfigRefused& e) {
      return e.errors().front().field;
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refused_field("write_gbs", 0), "machine.filesystem.write_gbs");
  EXPECT_EQ(refused_field("read_gbs", -1), "machine.filesystem.read_gbs");
  EXPECT_EQ(refused_field("nic_gbs_per_node", -5), "machine.filesystem.nic_gbs_per_node");
  EXPECT_EQ(refused_field("write_efficiency", 1.5), "machine.filesystem.write_efficiency");
  EXPECT_EQ(refused_field("read_efficiency", 0), "machine.filesystem.read_efficiency");
  EXPECT_EQ(refused_field("peak", 1), "machine.filesystem.peak");
  EXPECT_EQ(refused_field("write_gbs", "fast"), "machine.filesystem.write_gbs");
  EXPECT_EQ(refused_field("read_gbs", 1e5), "(accepted)");
  nlohmann::json unknown = good;
  unknown["filesystem"] = nullptr;  // null: unknown, as when absent
  EXPECT_FALSE(machine_from_json(unknown, "machine").filesystem);
}

TEST(CheckpointCost, ProjectRefusesABadFilesystemAndReportsTheCheckpoint) {
  test::ScratchDir dir("project-checkpoint");
  nlohmann::json cfg = {{"model", {{"layers", 24}, {"hidden", 2304}, {"heads", 24}, {"seq_len", 2048}, {"vocab", 51200}}},
                        {"plan", {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"micro_batch", 1}, {"global_batch", 64}, {"precision", "bf16"}}},
                        {"machine", to_json(load_machine("a100-80gb", default_machines_dir()))}};
  auto r = test::run_command(test::ptdp_cli() + " project --checkpoint-every 50 --out r.json --config " +
                                 dir.write("good.json", cfg.dump()).string(), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("checkpoint:"), std::string::npos) << r.out;
  const nlohmann::json c = nlohmann::json::parse(test::read_file(dir.path() / "r.json"))["metrics"]["checkpoint"];
  EXPECT_EQ(c["every"], 50);
  EXPECT_GT(c["save_share"].get<double>(), 0);
  EXPECT_GT(c["load_s"].get<double>(), 0);
  cfg["machine"]["filesystem"]["read_efficiency"] = 2;
  r = test::run_command(test::ptdp_cli() + " project --config " + dir.write("bad.json", cfg.dump()).string(), dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("filesystem.read_efficiency"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ptdp
