// The field tables (core/config/field.h) serve the reader, the writer,
// validate() and the generated docs and fuzz dictionary: every bound a table
// states is refused past either end, naming the field; a profile reads and
// writes back the same JSON; docs/config-fields.md and fuzz/ptdp.dict's
// generated section are what the tables generate now.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <vector>

#include "core/config/config.h"
#include "core/config/field_docs.h"
#include "tests/accept_test_util.h"
#include "tests/cli_test_util.h"
#include "tests/config_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

// One value past a bound, where it sits in a document and the field a refusal must name.
struct Breach {
  json::json_pointer where;
  std::string field;
  json value;
};

// Values just outside `b`: below and above.
std::vector<json> outside(const Bound& b) {
  if (b.kind == Bound::Kind::count) return {b.zero.empty() ? 0 : -1, b.max + 1};
  if (b.kind == Bound::Kind::interval) return {b.lo_open ? b.lo : b.lo - 1, b.hi_open ? b.hi : b.hi + 1};
  return {};
}

// Every unconditional bound of S's table (and its nested tables) under `at` in
// `doc`; a nested object, an optional one or a map of objects where `doc` has one.
template <HasFields S>
void collect_breaches(const json& doc, const json::json_pointer& at, const std::string& name,
                      std::vector<Breach>& out) {
  S s{};
  visit_fields(s, [&](const Field& f, const auto& value) {
    using T = std::remove_cvref_t<decltype(value)>;
    const auto where = at / std::string(f.key);
    const std::string field = name + "." + std::string(f.key);
    const bool has_object = doc.contains(where) && doc.at(where).is_object() && !doc.at(where).empty();
    if constexpr (HasFields<T>) {
      if (has_object) collect_breaches<T>(doc, where, field, out);
    } else if constexpr (kIsOptional<T>) {
      if (has_object) collect_breaches<typename T::value_type>(doc, where, field, out);
    } else if constexpr (kIsMap<T>) {
      if (!has_object) return;
      const std::string key = doc.at(where).begin().key();
      if constexpr (HasFields<typename T::mapped_type>)
        collect_breaches<typename T::mapped_type>(doc, where / key, field + "." + key, out);
      else
        for (const json& v : outside(f.bound)) out.push_back({where / key, field + "." + key, v});
    } else if (f.when.empty()) {
      for (const json& v : outside(f.bound)) out.push_back({where, field, v});
    }
  });
}

ConfigErrors profile_problems(const json& profile) {
  try {
    machine_from_json(profile, "machine");
  } catch (const ConfigRefused& e) {
    return e.errors();
  }
  return {};
}

TEST(ConfigFields, EveryBoundOfModelPlanAndOptimizerIsRefusedNamingItsField) {
  const json base = test::tiny_config_json();
  ASSERT_TRUE(test::config_problems(base).empty()) << test::errors_text(test::config_problems(base));
  std::vector<Breach> breaches;
  collect_breaches<Model>(base, json::json_pointer("/model"), "model", breaches);
  collect_breaches<Plan>(base, json::json_pointer("/plan"), "plan", breaches);
  collect_breaches<OptimizerConfig>(base, json::json_pointer("/optimizer"), "optimizer", breaches);
  EXPECT_GE(breaches.size(), 2u * (9 + 6 + 6));  // at least the bounded fields of today, each past both ends
  for (const Breach& b : breaches) {
    json j = base;
    j[b.where] = b.value;
    const ConfigErrors e = test::config_problems(j);
    EXPECT_TRUE(test::refused(e, b.field)) << b.field << "=" << b.value << "\n" << test::errors_text(e);
  }
}

TEST(ConfigFields, EveryBoundOfAProfileIsRefusedNamingItsField) {
  const json base = test::cpu_host_profile();
  ASSERT_TRUE(profile_problems(base).empty()) << test::errors_text(profile_problems(base));
  std::vector<Breach> breaches;
  collect_breaches<Machine>(base, json::json_pointer(""), "machine", breaches);
  // At least gpus_per_node, memory_bytes, memory_bandwidth_gbs, a peak, 3 per link, 10 efficiencies,
  // 5 filesystem figures, a band's expected value and tolerance: each past both ends.
  EXPECT_GE(breaches.size(), 2u * (4 + 3 + 3 + 10 + 5 + 2));
  for (const Breach& b : breaches) {
    json j = base;
    j[b.where] = b.value;
    const ConfigErrors e = profile_problems(j);
    EXPECT_TRUE(test::refused(e, b.field)) << b.field << "=" << b.value << "\n" << test::errors_text(e);
  }
}

TEST(ConfigFields, AConditionalBoundHoldsOnlyUnderItsCondition) {
  json j = test::tiny_config_json();
  j["model"]["rope_theta"] = 0;
  EXPECT_FALSE(test::refused(test::config_problems(j), "model.rope_theta"));  // learned positions: unused
  j["model"]["position"] = "rope";
  EXPECT_TRUE(test::refused(test::config_problems(j), "model.rope_theta", {"must be in (0, 1e+12]"}));
}

TEST(ConfigFields, ACountWhoseZeroMeansADefaultRefusesNegatives) {
  json j = test::tiny_config_json();
  j["model"]["ffn_hidden"] = 0;
  j["model"]["kv_heads"] = 0;
  EXPECT_TRUE(test::config_problems(j).empty());
  j["model"]["ffn_hidden"] = -1;
  j["model"]["kv_heads"] = -2;
  const ConfigErrors e = test::config_problems(j);
  EXPECT_TRUE(test::refused(e, "model.ffn_hidden", {"must be >= 0 (0: 4·hidden)"})) << test::errors_text(e);
  EXPECT_TRUE(test::refused(e, "model.kv_heads", {"must be >= 0 (0: heads)"})) << test::errors_text(e);
}

// Each table names a key once: a second row would read the key twice and write it once.
template <HasFields S>
void expect_unique_keys(const std::string& name) {
  std::set<std::string> keys;
  S s{};
  visit_fields(s, [&](const Field& f, const auto&) {
    EXPECT_TRUE(keys.insert(std::string(f.key)).second) << name << "." << f.key;
  });
}

TEST(ConfigFields, EachTableNamesAKeyOnce) {
  expect_unique_keys<Model>("model");
  expect_unique_keys<Plan>("plan");
  expect_unique_keys<OptimizerConfig>("optimizer");
  expect_unique_keys<Machine>("machine");
  expect_unique_keys<Link>("link");
  expect_unique_keys<Efficiency>("efficiency");
  expect_unique_keys<Filesystem>("filesystem");
  expect_unique_keys<AcceptanceBand>("acceptance band");
}

// A committed profile written back holds what its file gives (less the
// acceptance bands, which results do not echo), and reads back to itself.
TEST(ConfigFields, ProfilesWriteWhatTheyRead) {
  for (const char* name : {"cpu-host", "a100-80gb", "h100-80gb", "h200-141gb"}) {
    const json file = json::parse(test::read_file(test::machines_dir() / (std::string(name) + ".json")));
    const json written = to_json(load_machine(name, test::machines_dir()));
    EXPECT_FALSE(written.contains("acceptance")) << name;
    for (const auto& [key, value] : file.items()) {
      if (key == "acceptance") continue;
      EXPECT_EQ(written.at(key), value) << name << " " << key;
    }
    EXPECT_EQ(to_json(machine_from_json(written, name)), written) << name;
  }
}

TEST(ConfigFields, EmptyFieldsMarkedSoAreLeftOut) {
  Config c = config_from_json(test::tiny_config_json(), test::machines_dir());
  EXPECT_FALSE(to_json(c.plan).contains("layers_per_stage"));
  c.plan.layers_per_stage = {1, 1};
  EXPECT_EQ(to_json(c.plan).at("layers_per_stage"), json({1, 1}));
  Machine m = c.machine;
  m.sources.clear();
  EXPECT_FALSE(to_json(m).contains("sources"));
  EXPECT_FALSE(to_json(m).at("inter_node").contains("nics_per_node"));
  m.inter_node.nics_per_node = 4;
  EXPECT_EQ(to_json(m).at("inter_node").at("nics_per_node"), 4);
}

std::filesystem::path source(const char* file) { return std::filesystem::path(PTDP_SOURCE_DIR) / file; }
constexpr const char* kRegenerate = "regenerate: build/tests/ptdp_config_fields --write";

TEST(ConfigFields, DocsAreWhatTheTablesGenerate) {
  EXPECT_EQ(test::read_file(source("docs/config-fields.md")), config_fields_markdown()) << kRegenerate;
}

TEST(ConfigFields, FuzzDictionaryHoldsTheTablesSectionAndNoEntryTwice) {
  const std::string dict = test::read_file(source("fuzz/ptdp.dict"));
  EXPECT_EQ(dict, dict_with_config_fields(dict)) << kRegenerate;
  std::set<std::string> entries;
  std::istringstream lines(dict);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') continue;
    EXPECT_TRUE(entries.insert(line).second) << line << " appears twice";
  }
}

}  // namespace
}  // namespace ptdp
