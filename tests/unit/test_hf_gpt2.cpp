// Hugging Face GPT-2 interchange (core/checkpoint/hf_gpt2.h): the layout names
// every parameter of the model; QKV and Conv1D elements land where
// transformers reads them; ptdp → HF → ptdp is the identity but for the padded
// vocabulary rows (zero); the folder round trip; every config and tensor ptdp
// cannot compute is refused with its field named; and imported weights start
// every layout (t, p, d = 2, ranks as threads) from the same loss as one rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/checkpoint/hf_gpt2_export.h"
#include "core/checkpoint/safetensors.h"
#include "core/comm/in_process_communicator.h"
#include "core/comm/single_rank.h"
#include "core/kernels/cpu/cpu_ops.h"
#include "tests/cli_test_util.h"
#include "tests/cpu_training_util.h"
#include "tests/equivalence_config.h"
#include "tests/pipeline_pair_util.h"
#include "tests/unit/tolerances.h"

namespace ptdp {
namespace {

// The equivalence GPT (l 4, h 64, a 4, s 16) with V = 100 held as V' = 128 rows.
Config hf_test_config() {
  Config c = test::equivalence_config();
  c.model.vocab = 100;
  return c;
}

std::vector<ParamShape> hf_test_names(const Model& m) { return ptdp_param_shapes(hf_gpt2_layout(m, m.seq_len)); }

// Distinct, exactly representable values: element i of the k-th parameter is k·2^17 + i.
FullParams hf_patterned(const Model& m) {
  FullParams out;
  float k = 0;
  for (const ParamShape& n : hf_test_names(m)) {
    FullTensor& t = out[n.name];
    t.shape = n.shape;
    for (std::int64_t i = 0; i < shape_numel(n.shape); ++i) t.values.push_back(k * 131072.0f + static_cast<float>(i));
    k += 1;
  }
  return out;
}

// The seeded initial weights of cfg's model under `seed`, as full tensors.
FullParams hf_seeded(const Config& cfg, std::uint64_t seed) {
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator one;
  Plan plan;
  plan.precision = Precision::fp32;
  plan.seed = seed;
  ModelContext ctx{ops, one, cfg.model, plan};
  RankModel model(ctx, 0);
  return gather_full_params(model, ops, one, 0, hf_test_names(cfg.model));
}

void write_hf_folder(const std::filesystem::path& dir, const FullParams& p, const Model& m) {
  OutputFiles out;
  stage_hf_gpt2(out, dir, p, m);
  out.commit();
}

TEST(HfGpt2, LayoutNamesEveryParameterOfTheModel) {
  const Config cfg = hf_test_config();
  CpuAllocator alloc;
  CpuOps ops(alloc);
  SingleRankCommunicator one;
  ModelContext ctx{ops, one, cfg.model, cfg.plan};
  RankModel model(ctx, 0);
  const std::vector<ParamShape> names = hf_test_names(cfg.model);
  ASSERT_EQ(names.size(), model.params().size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(names[i].name, model.params()[i]->name);
    EXPECT_EQ(names[i].shape, model.params()[i]->full_shape) << names[i].name;
  }
}

// Element by element, as transformers' GPT2 reads them: c_attn output column
// head·d + e is ptdp's q row head·d + e, column (1 + j)·h + head·d + e its kv row
// (head·2 + j)·d + e (j 0 for k, 1 for v); Conv1D weights are (in, out).
TEST(HfGpt2, QkvAndConv1DElementsLandWhereTransformersReadsThem) {
  const Model m = hf_test_config().model;
  const std::int64_t h = m.hidden, head_dim = m.head_dim(), f = m.ffn();
  const FullParams p = hf_patterned(m);
  const auto hf = to_hf_gpt2(p, m);
  const auto& q = p.at("layers.1.q.weight").values;
  const auto& kv = p.at("layers.1.kv.weight").values;
  const auto& c_attn = hf.at("h.1.attn.c_attn.weight");
  ASSERT_EQ(c_attn.shape, (Shape{h, 3 * h}));
  const std::int64_t zero = 0;
  for (std::int64_t head : {zero, std::int64_t{m.heads} - 1})
    for (std::int64_t j : {0, 1, 2})
      for (std::int64_t e : {zero, head_dim - 1})
        for (std::int64_t k : {zero, zero + 5, h - 1}) {
          const float ours = j == 0 ? q[static_cast<std::size_t>((head * head_dim + e) * h + k)]
                                    : kv[static_cast<std::size_t>(((head * 2 + j - 1) * head_dim + e) * h + k)];
          EXPECT_EQ(c_attn.values[static_cast<std::size_t>(k * 3 * h + j * h + head * head_dim + e)], ours)
              << "head " << head << " j " << j << " e " << e << " k " << k;
        }
  EXPECT_EQ(hf.at("h.1.attn.c_attn.bias").values[static_cast<std::size_t>(2 * h + 3 * head_dim + 1)],
            p.at("layers.1.kv.bias").values[static_cast<std::size_t>((3 * 2 + 1) * head_dim + 1)]);
  EXPECT_EQ(hf.at("h.1.attn.c_attn.bias").values[static_cast<std::size_t>(3 * head_dim + 1)],
            p.at("layers.1.q.bias").values[static_cast<std::size_t>(3 * head_dim + 1)]);
  const auto& fc1 = hf.at("h.0.mlp.c_fc.weight");
  ASSERT_EQ(fc1.shape, (Shape{h, f}));
  EXPECT_EQ(fc1.values[static_cast<std::size_t>(7 * f + 100)],
            p.at("layers.0.fc1.weight").values[static_cast<std::size_t>(100 * h + 7)]);
  EXPECT_EQ(hf.at("h.3.attn.c_proj.weight").values[static_cast<std::size_t>(2 * h + 9)],
            p.at("layers.3.proj.weight").values[static_cast<std::size_t>(9 * h + 2)]);
  EXPECT_EQ(hf.at("wte.weight").shape, (Shape{m.vocab, h}));  // padded rows dropped
  EXPECT_EQ(hf.at("ln_f.bias").values, p.at("final_ln.bias").values);
}

TEST(HfGpt2, RoundTripIsTheIdentityButForThePaddedRows) {
  const Model m = hf_test_config().model;
  const FullParams p = hf_patterned(m);
  const FullParams back = from_hf_gpt2(to_hf_gpt2(p, m), m, m.seq_len);
  ASSERT_EQ(back.size(), p.size());
  for (const auto& [name, t] : p) {
    const FullTensor& b = back.at(name);
    ASSERT_EQ(b.shape, t.shape) << name;
    const std::size_t kept = name == "embedding.wte" ? static_cast<std::size_t>(m.vocab * m.hidden) : t.values.size();
    for (std::size_t i = 0; i < t.values.size(); ++i)
      ASSERT_EQ(b.values[i], i < kept ? t.values[i] : 0.0f) << name << "[" << i << "]";
  }
  const test::ScratchDir dir("hf-roundtrip");
  write_hf_folder(dir.path() / "hf", p, m);
  const FullParams read = read_hf_gpt2(dir.path() / "hf", m);
  for (const auto& [name, t] : back) EXPECT_EQ(read.at(name).values, t.values) << name;
}

// What transformers' own files may hold: no "transformer." prefix (GPT2Model),
// the causal mask buffers, a separate but equal lm_head; and more positions than s.
TEST(HfGpt2, ReadsGpt2ModelFilesAndLongerPositionTables) {
  const Model m = hf_test_config().model;
  const FullParams p = hf_patterned(m);
  auto hf = to_hf_gpt2(p, m);
  FullTensor& wpe = hf.at("wpe.weight");
  wpe.shape[0] = 2 * m.seq_len;
  wpe.values.resize(static_cast<std::size_t>(2 * m.seq_len * m.hidden), 9.0f);
  hf["lm_head.weight"] = hf.at("wte.weight");
  const std::vector<float> mask(4, 1.0f);
  std::vector<TensorRef> refs{{"h.0.attn.bias", DType::f32, {2, 2}, mask.data()}};
  for (const auto& [name, t] : hf) refs.push_back({name, DType::f32, t.shape, t.values.data()});
  const test::ScratchDir dir("hf-gpt2model");
  write_safetensors(dir.path() / kHfWeightsFile, refs, {{"format", "pt"}});
  nlohmann::json config = hf_gpt2_config(m);
  config["n_positions"] = 2 * m.seq_len;
  dir.write(kHfConfigFile, config.dump());
  const FullParams read = read_hf_gpt2(dir.path(), m);
  EXPECT_EQ(read.at("embedding.wpe").values, p.at("embedding.wpe").values);  // the first s rows
  EXPECT_EQ(read.at("layers.2.fc2.weight").values, p.at("layers.2.fc2.weight").values);
}

// The fields of every refusal of `dir`'s folder (none: it was read).
std::vector<std::string> hf_refused_fields(const std::filesystem::path& dir, const Model& m) {
  try {
    read_hf_gpt2(dir, m);
    return {};
  } catch (const ConfigRefused& e) {
    std::vector<std::string> fields;
    for (const ConfigError& err : e.errors()) fields.push_back(err.field);
    return fields;
  }
}

TEST(HfGpt2, RefusesTensorsItCannotPlace) {
  const Model m = hf_test_config().model;
  auto hf = to_hf_gpt2(hf_patterned(m), m);
  hf["lm_head.weight"] = hf.at("wte.weight");
  hf["lm_head.weight"].values[3] += 1;       // an untied output layer
  hf["h.0.crossattention.c_attn.weight"] = hf.at("h.0.attn.c_attn.weight");  // no place in ptdp
  std::vector<TensorRef> refs;
  for (const auto& [name, t] : hf) refs.push_back({name, DType::f32, t.shape, t.values.data()});
  const test::ScratchDir dir("hf-refused");
  const auto weights = (dir.path() / kHfWeightsFile).string();
  write_safetensors(weights, refs);
  dir.write(kHfConfigFile, hf_gpt2_config(m).dump());
  EXPECT_EQ(hf_refused_fields(dir.path(), m),
            (std::vector<std::string>{weights + ": h.0.crossattention.c_attn.weight", weights + ": lm_head.weight"}));
  refs.erase(std::remove_if(refs.begin(), refs.end(), [](const TensorRef& r) { return r.name.find("h.1.ln_2") == 0 ||
                                                                                  r.name.find("lm_") == 0 ||
                                                                                  r.name.find("h.0.cross") == 0; }),
             refs.end());
  write_safetensors(weights, refs);
  const auto fields = hf_refused_fields(dir.path(), m);  // a missing tensor
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0], weights);
  EXPECT_EQ(hf_refused_fields(dir.path() / "absent", m),
            (std::vector<std::string>{(dir.path() / "absent" / kHfConfigFile).string()}));
}

TEST(HfGpt2Config, TheWrittenConfigDescribesTheModel) {
  const Model m = hf_test_config().model;
  const nlohmann::json c = hf_gpt2_config(m);
  EXPECT_TRUE(check_hf_gpt2_config(c, m, "c.json").empty());
  EXPECT_EQ(c["activation_function"], "gelu_new");  // ptdp's GeLU is the tanh form
  EXPECT_EQ(c["layer_norm_epsilon"], 1e-5);
  EXPECT_EQ(c["vocab_size"], 100);  // V, not the padded V'
  EXPECT_EQ(c["n_positions"], m.seq_len);
  EXPECT_EQ(c["tie_word_embeddings"], true);
}

TEST(HfGpt2Config, EachChoicePtdpCannotComputeIsNamed) {
  const Model m = hf_test_config().model;
  const struct {
    const char* key;
    nlohmann::json value;  // null: the key removed
  } cases[] = {{"n_embd", 128},
               {"n_layer", 3},
               {"n_head", 8},
               {"vocab_size", 128},
               {"n_inner", 128},
               {"n_positions", 8},
               {"n_layer", nullptr},
               {"activation_function", "gelu"},
               {"layer_norm_epsilon", 1e-6},
               {"tie_word_embeddings", false},
               {"scale_attn_weights", false},
               {"scale_attn_by_inverse_layer_idx", true},
               {"add_cross_attention", true},
               {"model_type", "gpt_neox"},
               {"n_head", "four"}};
  for (const auto& c : cases) {
    nlohmann::json j = hf_gpt2_config(m);
    if (c.value.is_null()) j.erase(c.key);
    else j[c.key] = c.value;
    const ConfigErrors e = check_hf_gpt2_config(j, m, "c.json");
    ASSERT_EQ(e.size(), 1u) << c.key << " " << c.value.dump();
    EXPECT_EQ(e[0].field, std::string("c.json: ") + c.key) << e[0].message;
  }
  nlohmann::json j = hf_gpt2_config(m);
  j["n_inner"] = nullptr;  // transformers' 4·n_embd, ptdp's default
  j["activation_function"] = "gelu_pytorch_tanh";  // the same tanh form
  EXPECT_TRUE(check_hf_gpt2_config(j, m, "c.json").empty());
}

// The export's check: "loss" is ptdp's forward of exactly the HF tensors (no
// padded rows); the padded model's loss differs by their softmax share.
TEST(HfGpt2Export, CheckLossIsTheForwardOfTheExportedWeights) {
  const Config cfg = hf_test_config();
  const FullParams p = hf_seeded(cfg, 3);
  const auto data = make_synthetic_source(cfg.model.vocab, 1);
  const FixedBatch batch = fixed_batch(*data, 2, cfg.model.seq_len);
  const nlohmann::json j = hf_gpt2_check(p, cfg.model, batch);
  Model unpadded = cfg.model;
  unpadded.vocab_pad_to = 1;
  const double exported = fixed_batch_loss(unpadded, from_hf_gpt2(to_hf_gpt2(p, cfg.model), unpadded, 16), batch);
  EXPECT_EQ(j["loss"].get<double>(), exported);
  EXPECT_EQ(j["loss_as_trained"].get<double>(), fixed_batch_loss(cfg.model, p, batch));
  EXPECT_GT(j["loss_as_trained"].get<double>(), exported);  // 28 more rows in the softmax
  EXPECT_EQ(j["tokens"].size(), 2u);
  EXPECT_EQ(j["tokens"][1][0], batch.tokens[16]);
  EXPECT_EQ(j["targets"][0][0], batch.tokens[1]);
}

struct HfImportLayout {
  int t, p, dp;
};
void PrintTo(const HfImportLayout& l, std::ostream* os) { *os << "t" << l.t << "p" << l.p << "d" << l.dp; }

// The HF folder of a model far from any seeded start: seed 5's weights ×20
// (std 0.4, where every seed starts at std 0.02 and a loss near ln V').
FullParams hf_far_weights(const Config& cfg, const std::filesystem::path& dir) {
  FullParams far = hf_seeded(cfg, 5);
  for (auto& [name, t] : far)
    for (float& v : t.values) v *= 20;
  write_hf_folder(dir, far, cfg.model);
  return read_hf_gpt2(dir, cfg.model);
}

// Iteration 1's loss of cfg on its t·p·d ranks (threads) started from
// `imported`, and the full weights they gather back before the step.
double imported_first_loss(const Config& cfg, const FullParams& imported, FullParams& gathered) {
  auto world = make_in_process_world(cfg.plan.world_size(), 120);
  std::vector<FullParams> each(world.size());
  const std::vector<double> losses = test::run_rank_threads(world, [&](int r, Communicator& comm) {
    CpuAllocator alloc(r);
    CpuOps ops(alloc);
    ProcessGroups groups = make_process_groups(comm, test::plan_topology(cfg), false);
    const auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
    Trainer trainer(cfg, ops, groups, *data, [&](RankModel& m) { load_full_params(m, ops, imported); });
    each[static_cast<std::size_t>(r)] =
        gather_full_params(trainer.model(), ops, comm, groups.coord.dp, hf_test_names(cfg.model));
    return std::vector<double>{trainer.step(0).loss};
  });
  gathered = each.back();
  return losses[0];
}

class HfGpt2Import : public testing::TestWithParam<HfImportLayout> {};

// One HF folder starts one rank and two (t, p or d = 2) at the same loss: the
// forward of the imported weights on the batch (not the seeded start), and
// the weights gathered back from the ranks are the imported ones exactly.
TEST_P(HfGpt2Import, EveryLayoutStartsFromTheImportedWeights) {
  const HfImportLayout l = GetParam();
  Config cfg = hf_test_config();
  const test::ScratchDir dir("hf-import");
  const FullParams imported = hf_far_weights(cfg, dir.path());
  const auto data = make_synthetic_source(cfg.model.vocab, cfg.plan.seed);
  const double forward = fixed_batch_loss(cfg.model, imported, fixed_batch(*data, cfg.plan.global_batch, 16));
  EXPECT_GT(std::abs(forward - test::cpu_train_losses(cfg, 1)[0]), 0.1);
  FullParams gathered;
  const double single = imported_first_loss(cfg, imported, gathered);
  // The step runs micro-batches of 1, the fixed-batch forward the whole batch:
  // equal up to the GEMMs' blocking, far below the 0.1 that tells the imported
  // start from the seeded one.
  EXPECT_NEAR(single, forward, test::kReblockF32Rel * forward);
  cfg.plan.tp = l.t, cfg.plan.pp = l.p, cfg.plan.dp = l.dp;
  ASSERT_TRUE(validate(cfg, 2).empty()) << validate(cfg, 2).front().message;
  EXPECT_NEAR(imported_first_loss(cfg, imported, gathered), single, 1e-5 * single);
  for (const auto& [name, t] : imported) EXPECT_EQ(gathered.at(name).values, t.values) << name;
}

INSTANTIATE_TEST_SUITE_P(TwoRanks, HfGpt2Import,
                         testing::Values(HfImportLayout{2, 1, 1}, HfImportLayout{1, 2, 1}, HfImportLayout{1, 1, 2}),
                         [](const testing::TestParamInfo<HfImportLayout>& i) {
                           return "t" + std::to_string(i.param.t) + "p" + std::to_string(i.param.p) + "d" +
                                  std::to_string(i.param.dp);
                         });

}  // namespace
}  // namespace ptdp
