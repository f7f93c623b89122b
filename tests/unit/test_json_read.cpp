// The strict JSON reader: depth and size limits, numbers that overflow a
// double, integers that would wrap or truncate, and refusals that name the
// source, the JSON pointer and the rule.
#include <gtest/gtest.h>

#include <limits>

#include "core/config/config.h"
#include "core/config/json_read.h"
#include "tests/cli_test_util.h"

namespace ptdp {
namespace {

using nlohmann::json;

// The refusal of parsing `text` as "doc.json", or "accepted".
std::string parse_refusal(const std::string& text) {
  try {
    parse_json(text, "doc.json");
  } catch (const JsonRefused& e) {
    return e.what();
  }
  return "accepted";
}

TEST(JsonRead, ANumberThatOverflowsADoubleIsRefusedAtItsPointer) {
  EXPECT_EQ(parse_refusal(R"({"model": {"hidden": 1e400}})"), "doc.json: /model/hidden: the number 1e400 overflows a double");
  EXPECT_EQ(parse_refusal(R"({"a": [1, 2, -1e400]})"), "doc.json: /a/2: the number -1e400 overflows a double");
  EXPECT_EQ(parse_refusal("1e400"), "doc.json: the number 1e400 overflows a double");
  EXPECT_EQ(parse_refusal(R"({"a/b~c": 1e999})"), "doc.json: /a~1b~0c: the number 1e999 overflows a double");
  EXPECT_EQ(parse_refusal(R"({"tiny": 1e-400, "big": 1e300})"), "accepted");  // underflow is 0; 1e300 is a double
}

TEST(JsonRead, ARepeatedKeyIsRefusedAtItsPointerNotTakenLastOneWinning) {
  EXPECT_EQ(parse_refusal(R"({"step": 1, "step": 2})"), "doc.json: /step: the key \"step\" appears twice in one object");
  EXPECT_EQ(parse_refusal(R"({"m": {"a": 1}, "x": [{"k": 1, "k": 1}]})"),
            "doc.json: /x/0/k: the key \"k\" appears twice in one object");
  // The same key in sibling or nested objects is no repetition.
  EXPECT_EQ(parse_refusal(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "c": {"b": {"a": {}}}})"), "accepted");
}

TEST(JsonRead, RefusalsEchoingHugeInputStayShort) {
  const std::string key(30 << 20, 'k');  // a 30 MB key, refused for its repetition
  const std::string refusal = parse_refusal("{\"" + key + "\": 1, \"" + key + "\": 2}");
  EXPECT_LT(refusal.size(), 3 * kMessageLimit);
  EXPECT_NE(refusal.find("appears twice"), std::string::npos);
  EXPECT_EQ(cut_text(std::string(500, 'x'), 10), "xxxxxxxxxx...");
  EXPECT_EQ(cut_text("short"), "short");
}

TEST(JsonRead, NestingAHundredThousandDeepIsRefusedNotACrash) {
  const int depth = 100000;
  const std::string arrays = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_NE(parse_refusal(arrays).find("nests deeper than 64 levels"), std::string::npos);
  std::string objects;
  for (int i = 0; i < depth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(depth, '}');
  const std::string refusal = parse_refusal(objects);
  EXPECT_EQ(refusal.rfind("doc.json: /a/a/a/", 0), 0u) << refusal.substr(0, 80);
  EXPECT_NE(refusal.find("nests deeper than 64 levels"), std::string::npos);
  // 64 levels are read.
  EXPECT_EQ(parse_refusal(std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']')), "accepted");
}

TEST(JsonRead, SyntaxErrorsNameTheSourceAndWhere) {
  EXPECT_NE(parse_refusal(R"({"schema": )").find("doc.json: /schema: not valid JSON: "), std::string::npos);
  EXPECT_NE(parse_refusal("{} {}").find("not valid JSON"), std::string::npos);
  EXPECT_NE(parse_refusal("").find("doc.json: not valid JSON"), std::string::npos);
  EXPECT_NE(parse_refusal(R"({"x": NaN})").find("not valid JSON"), std::string::npos);
}

TEST(JsonRead, FilesThatAreMissingDirectoriesOrTooLargeAreRefused) {
  test::ScratchDir dir("json-read");
  const auto refusal = [](const std::filesystem::path& f) {
    try {
      read_json_file(f);
    } catch (const JsonRefused& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(dir.path()), dir.path().string() + ": is a directory, not a JSON file");
  EXPECT_NE(refusal(dir.path() / "none.json").find("none.json: cannot be read"), std::string::npos);
  EXPECT_NE(refusal(std::string(300, 'x') + ".json").find("cannot be read"), std::string::npos);  // name too long
  EXPECT_NE(refusal("/dev/zero").find("/dev/zero: is larger than the limit of 64 MiB"), std::string::npos);
  EXPECT_EQ(read_json_file(dir.write("ok.json", R"({"a": [1]})")), json::parse(R"({"a": [1]})"));
}

// The conversion's rule, or "" when `v` converts to T.
template <class T>
std::string why_not(const json& v) {
  T out{};
  return json_convert(v, out);
}

TEST(JsonRead, IntegersNeverWrapOrTruncate) {
  EXPECT_EQ(why_not<int>(json::parse("2147483647")), "");
  EXPECT_EQ(why_not<int>(json::parse("2147483648")), "is out of range for a 32-bit integer");
  EXPECT_EQ(why_not<int>(json::parse("10000000000")), "is out of range for a 32-bit integer");
  EXPECT_EQ(why_not<int>(json::parse("18446744073709551615")), "is out of range for a 64-bit integer");
  EXPECT_EQ(why_not<std::int64_t>(json::parse("9223372036854775808")), "is out of range for a 64-bit integer");
  EXPECT_EQ(why_not<int>(json::parse("2.5")), "must be an integer");
  EXPECT_EQ(why_not<int>(json::parse("1e10")), "must be an integer");
  EXPECT_EQ(why_not<std::uint64_t>(json::parse("-1")), "must be a non-negative integer");
  EXPECT_EQ(why_not<std::uint64_t>(json(7)), "");  // a signed integer built in code
  EXPECT_EQ(why_not<double>(json(std::numeric_limits<double>::infinity())), "must be a finite number");
  EXPECT_EQ(why_not<double>(json(std::nan(""))), "must be a finite number");
  EXPECT_EQ(why_not<std::string>(json(5)), "must be a string");
  EXPECT_EQ(why_not<bool>(json("yes")), "must be true or false");
}

TEST(JsonRead, JsonAtNamesThePointerOfWhatItWasAskedAbout) {
  const json doc = json::parse(R"({"points": [{"key": 3}, {}], "a/b": {"c": null}})");
  const JsonAt at(doc, "r.json");
  const auto refusal = [](auto&& read) {
    try {
      read();
    } catch (const JsonRefused& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal([&] { at.at("points").elements()[0].at("key").get<std::string>(); }),
            "r.json: /points/0/key: must be a string (got 3)");
  EXPECT_EQ(refusal([&] { at.at("points").elements()[1].at("key"); }), "r.json: /points/1/key: is missing");
  EXPECT_EQ(refusal([&] { at.at("a/b").at("c"); }), "r.json: /a~1b/c: is missing");  // null is absent
  EXPECT_EQ(refusal([&] { at.at("points").at("x"); }), "r.json: /points: must be a JSON object (got [{\"key\":3},{}])");
  EXPECT_EQ(refusal([&] { at.elements(); }).rfind("r.json: must be a JSON array", 0), 0u);
  EXPECT_EQ(at.get<int>("missing", 7), 7);
}

// Excerpts go into messages that are written as JSON too (compare --out, a
// sweep point's reason): a cut inside a UTF-8 character would make dump() throw.
TEST(JsonRead, ExcerptsAreCutBetweenUtf8Characters) {
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\u00e9";  // 2 bytes each: the 60-byte cut falls inside one
  const std::string excerpt = json_excerpt(json(accents));
  EXPECT_EQ(excerpt, "\"" + accents.substr(0, 58) + "...");
  EXPECT_NO_THROW((void)json(excerpt).dump());
  EXPECT_EQ(json_excerpt(json("short")), "\"short\"");
}

TEST(JsonRead, ProductsOfSizesSaturateInsteadOfWrapping) {
  Plan p;
  p.tp = p.pp = p.dp = 65536;
  EXPECT_EQ(p.world_size(), std::numeric_limits<int>::max());
  p.micro_batch = 65536, p.global_batch = 8;
  EXPECT_EQ(p.micro_batches(), 0);
  Model m;
  m.hidden = 1 << 30;
  EXPECT_EQ(m.ffn(), std::numeric_limits<int>::max());
  m.vocab = std::numeric_limits<int>::max();
  EXPECT_EQ(m.padded_vocab(), std::numeric_limits<int>::max());
  EXPECT_EQ(saturating_product({1 << 20, 1 << 20, 1 << 20, 1 << 20}), std::numeric_limits<std::int64_t>::max());
}

}  // namespace
}  // namespace ptdp
