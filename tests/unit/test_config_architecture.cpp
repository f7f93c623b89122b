// The block architecture fields (issue 19): their defaults keep the paper's GPT,
// they round-trip, and each bad combination is refused with its field named.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/config/config.h"
#include "tests/config_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

json tiny_llama() {
  return json::parse(R"({
    "model": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "seq_len": 16, "vocab": 128,
              "ffn_hidden": 96, "norm": "rmsnorm", "activation": "swiglu", "position": "rope",
              "rope_theta": 500000, "bias": false, "tied_embeddings": false},
    "plan": {"tp": 2, "pp": 1, "dp": 1, "micro_batch": 2, "global_batch": 8, "precision": "fp32"},
    "machine": "cpu-host"})");
}

TEST(ConfigArchitecture, DefaultsAreThePapersGptBlock) {
  json j = tiny_llama();
  j["model"] = {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"seq_len", 16}, {"vocab", 128}};
  const Model m = config_from_json(j, test::machines_dir()).model;
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.kv(), 4);
  EXPECT_EQ(m.norm, Norm::layernorm);
  EXPECT_EQ(m.activation, Activation::gelu);
  EXPECT_EQ(m.position, Position::learned);
  EXPECT_TRUE(m.bias);
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(ConfigArchitecture, LlamaFieldsReadAndRoundTrip) {
  const Config c = config_from_json(tiny_llama(), test::machines_dir());
  EXPECT_TRUE(validate(c, 2).empty()) << test::errors_text(validate(c, 2));
  EXPECT_EQ(c.model.kv(), 2);
  EXPECT_EQ(c.model.norm, Norm::rmsnorm);
  EXPECT_EQ(c.model.activation, Activation::swiglu);
  EXPECT_EQ(c.model.position, Position::rope);
  EXPECT_DOUBLE_EQ(c.model.rope_theta, 500000);
  EXPECT_FALSE(c.model.bias);
  EXPECT_FALSE(c.model.tied_embeddings);
  const json again = to_json(c);
  EXPECT_EQ(again["model"]["norm"], "rmsnorm");
  EXPECT_EQ(to_json(config_from_json(again, test::machines_dir())), again);
}

TEST(ConfigArchitecture, KvHeadsMustDivideHeads) {
  json j = tiny_llama();
  j["model"]["kv_heads"] = 3;
  j["plan"]["tp"] = 1;
  EXPECT_TRUE(test::refused(test::config_problems(j), "model.kv_heads", {"does not divide model.heads=4"}))
      << test::errors_text(test::config_problems(j));
}

TEST(ConfigArchitecture, KvHeadsSplitOrReplicateOverTp) {
  json j = tiny_llama();
  j["model"]["heads"] = 8;
  j["model"]["kv_heads"] = 4;
  j["plan"]["tp"] = 8;  // t > g: each kv head on t/g = 2 ranks
  EXPECT_TRUE(test::config_problems(j).empty()) << test::errors_text(test::config_problems(j));
  j["model"]["hidden"] = 96;
  j["model"]["heads"] = 12;
  j["model"]["kv_heads"] = 6;
  j["plan"]["tp"] = 4;  // t <= g and t does not divide g
  EXPECT_TRUE(test::refused(test::config_problems(j), "plan.tp", {"does not divide model.kv_heads=6"}))
      << test::errors_text(test::config_problems(j));
  j["model"]["hidden"] = 128;
  j["model"]["heads"] = 16;
  j["model"]["kv_heads"] = 2;
  j["plan"]["tp"] = 16;  // fine: 2 divides 16
  j["model"]["vocab"] = 128;
  EXPECT_FALSE(test::refused(test::config_problems(j), "model.kv_heads", {""}))
      << test::errors_text(test::config_problems(j));
  j["model"]["kv_heads"] = 8;
  j["model"]["heads"] = 8;
  j["model"]["hidden"] = 96;
  j["model"]["ffn_hidden"] = 192;
  j["plan"]["tp"] = 12;  // t > g and g does not divide t (heads are refused too)
  EXPECT_TRUE(test::refused(test::config_problems(j), "model.kv_heads", {"does not divide plan.tp=12"}))
      << test::errors_text(test::config_problems(j));
}

TEST(ConfigArchitecture, RopeNeedsAnEvenHeadDimension) {
  json j = tiny_llama();
  j["model"]["hidden"] = 60;
  j["model"]["heads"] = 4;  // head dimension 15
  j["model"]["kv_heads"] = 4;
  j["plan"]["tp"] = 1;
  EXPECT_TRUE(test::refused(test::config_problems(j), "model.position", {"must be even"}))
      << test::errors_text(test::config_problems(j));
  j["model"]["position"] = "learned";
  EXPECT_TRUE(test::config_problems(j).empty()) << test::errors_text(test::config_problems(j));
}

TEST(ConfigArchitecture, SwigluWidthMustSplitOverTp) {
  json j = tiny_llama();
  j["model"]["ffn_hidden"] = 99;
  EXPECT_TRUE(test::refused(test::config_problems(j), "plan.tp", {"model.ffn_hidden (swiglu)=99"}))
      << test::errors_text(test::config_problems(j));
}

TEST(ConfigArchitecture, UnknownNamesAreRefused) {
  for (const char* key : {"norm", "activation", "position"}) {
    json j = tiny_llama();
    j["model"][key] = "mystery";
    EXPECT_TRUE(test::refused(test::config_problems(j), std::string("model.") + key, {"\"mystery\" is not one of"}))
        << key << "\n" << test::errors_text(test::config_problems(j));
  }
}

TEST(ConfigArchitecture, Fp8IsRefusedAsOutOfScope) {
  json j = tiny_llama();
  j["plan"]["precision"] = "fp8";
  EXPECT_TRUE(test::refused(test::config_problems(j), "plan.precision", {"out of scope"}))
      << test::errors_text(test::config_problems(j));
}

}  // namespace
}  // namespace ptdp
