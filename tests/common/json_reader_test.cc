#include "common/json_reader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rigel {
namespace {

// The root of `text`, which must parse.
JsonValue Root(const std::string& text, const std::string& source = "t.json") {
  StatusOr<JsonValue> j = ParseJson(text, source);
  EXPECT_TRUE(j.ok()) << j.status().message();
  return j.ok() ? *j : *ParseJson("null", source);
}

// The message of a failed result; "" (and a test failure) when it succeeded.
template <typename T>
std::string Message(const StatusOr<T>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(ParseJson, ASyntaxErrorNamesTheSourceLineAndColumn) {
  // The stray `x` is on line 3, column 3.
  std::string m = Message(ParseJson("{\n  \"a\": 1,\n  x\n}", "plan.json"));
  EXPECT_EQ(m.rfind("plan.json: not valid JSON at line 3, column 3: ", 0), 0u) << m;
  EXPECT_NE(m.find("object key"), std::string::npos) << m;
  // nlohmann's own "[json.exception.parse_error.101] ... at line ..." is not repeated.
  EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
  EXPECT_EQ(m.find("parse error at"), std::string::npos) << m;

  m = Message(ParseJson("{", "f.json"));
  EXPECT_EQ(m.rfind("f.json: not valid JSON at line 1, column 2: ", 0), 0u) << m;
  EXPECT_NE(m.find("end of input"), std::string::npos) << m;
  m = Message(ParseJson("", "f.json"));
  EXPECT_EQ(m.rfind("f.json: not valid JSON at line 1, column 1: ", 0), 0u) << m;
}

TEST(ParseJson, RefusesWhatStrictJsonRefusesWithoutThrowing) {
  for (const char* text :
       {"{} x", "[1, 2,]", "{\"a\": 1} // note", "{'a': 1}", "1e999", "\"\xff\"", "[1, 2"}) {
    StatusOr<JsonValue> j = ParseJson(text, "x.json");
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_EQ(j.status().message().rfind("x.json: not valid JSON at line 1, column ", 0), 0u)
        << j.status().message();
  }
  // A number too large for a double is refused where it is, not thrown.
  std::string m = Message(ParseJson("[1,\n 1e999]", "x.json"));
  EXPECT_EQ(m.rfind("x.json: not valid JSON at line 2, column ", 0), 0u) << m;
  EXPECT_NE(m.find("1e999"), std::string::npos) << m;
}

TEST(ParseJson, AcceptsEveryKindOfValueAtTheTop) {
  EXPECT_TRUE(Root("null").IsNull());
  EXPECT_TRUE(Root(" true ").IsBool());
  EXPECT_TRUE(Root("-3").IsInteger());
  EXPECT_TRUE(Root("2.5").IsNumber());
  EXPECT_FALSE(Root("2.5").IsInteger());
  EXPECT_TRUE(Root("\"s\"").IsString());
  EXPECT_TRUE(Root("[]").IsArray());
  EXPECT_TRUE(Root("{}").IsObject());
  EXPECT_EQ(Root("{}").path(), "");
  EXPECT_EQ(Root("{}", "the scheduler's reply").source(), "the scheduler's reply");
}

TEST(JsonValue, TypedGettersReadTheirTypes) {
  JsonValue j = Root(
      R"({"s": "x", "i": -7, "u": 18446744073709551615, "d": 2.5, "di": 3, "b": true,
          "a": [1, 2], "o": {"k": null}})");
  EXPECT_EQ(*j.GetString("s"), "x");
  EXPECT_EQ(*j.GetInt("i"), -7);
  EXPECT_EQ(*j.GetUint("u"), UINT64_MAX);
  EXPECT_EQ(*j.GetDouble("d"), 2.5);
  EXPECT_EQ(*j.GetDouble("di"), 3.0);  // an integer is a number too
  EXPECT_EQ(*j.GetBool("b"), true);
  ASSERT_TRUE(j.GetArray("a").ok());
  EXPECT_EQ(j.GetArray("a")->size(), 2u);
  ASSERT_TRUE(j.GetObject("o").ok());
  EXPECT_TRUE(j.GetObject("o")->Get("k")->IsNull());
  EXPECT_EQ(j.GetObject("o")->path(), "o");
}

TEST(JsonValue, AMissingFieldIsNamedWithItsPath) {
  JsonValue j = Root(R"({"a": {"b": {}}})", "checkpoint.json");
  EXPECT_EQ(Message(j.GetInt("epoch")), "checkpoint.json: epoch: missing");
  StatusOr<JsonValue> b = j.GetObject("a")->GetObject("b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Message(b->GetString("c")), "checkpoint.json: a.b.c: missing");
  EXPECT_EQ(Message(b->Get("c")), "checkpoint.json: a.b.c: missing");
}

TEST(JsonValue, EachGetterNamesTheTypeItWantedAndTheOneItFound) {
  JsonValue j = Root(R"({"n": 3, "f": 1.5, "s": "two", "b": false, "l": [1], "o": {}, "z": null})");
  EXPECT_EQ(Message(j.GetString("n")), "t.json: n: expected a string, found a number (3)");
  EXPECT_EQ(Message(j.GetInt("f")), "t.json: f: expected an integer, found a number (1.5)");
  EXPECT_EQ(Message(j.GetInt("s")), "t.json: s: expected an integer, found a string (\"two\")");
  EXPECT_EQ(Message(j.GetUint("b")),
            "t.json: b: expected a non-negative integer, found a boolean (false)");
  EXPECT_EQ(Message(j.GetDouble("s")), "t.json: s: expected a number, found a string (\"two\")");
  EXPECT_EQ(Message(j.GetBool("z")), "t.json: z: expected a boolean (true or false), found null");
  EXPECT_EQ(Message(j.GetArray("o")), "t.json: o: expected a list, found an object");
  EXPECT_EQ(Message(j.GetObject("l")), "t.json: l: expected an object, found a list");
  // Members of something that is no object.
  EXPECT_EQ(Message(j.Get("l")->Get("x")), "t.json: l: expected an object, found a list");
  EXPECT_EQ(Message(Root("[1, 2]").GetInt("workers")),
            "t.json: (top level): expected an object, found a list");
  EXPECT_EQ(Message(Root("[1, 2]").Members()),
            "t.json: (top level): expected an object, found a list");
  EXPECT_EQ(Message(j.Get("n")->Elements()), "t.json: n: expected a list, found a number (3)");
}

TEST(JsonValue, IntegersKeepToTheirRange) {
  JsonValue j = Root(R"({"max": 9223372036854775807, "min": -9223372036854775808,
                         "over": 9223372036854775808, "neg": -1, "two": 2.0, "exp": 1e3,
                         "umax": 18446744073709551615, "zero": 0})");
  EXPECT_EQ(*j.GetInt("max"), INT64_MAX);
  EXPECT_EQ(*j.GetInt("min"), INT64_MIN);
  EXPECT_EQ(Message(j.GetInt("over")),
            "t.json: over: expected an integer in -9223372036854775808..9223372036854775807, "
            "found 9223372036854775808");
  EXPECT_EQ(*j.GetUint("over"), uint64_t{9223372036854775808u});
  EXPECT_EQ(*j.GetUint("umax"), UINT64_MAX);
  EXPECT_EQ(Message(j.GetInt("umax")).find("t.json: umax: expected an integer in"), 0u);
  EXPECT_EQ(Message(j.GetUint("neg")),
            "t.json: neg: expected a non-negative integer, found a number (-1)");
  EXPECT_EQ(*j.GetInt("neg"), -1);
  EXPECT_EQ(*j.GetUint("zero"), 0u);
  // Written with a fraction or an exponent: a number, not an integer.
  EXPECT_EQ(Message(j.GetInt("two")), "t.json: two: expected an integer, found a number (2.0)");
  EXPECT_EQ(Message(j.GetUint("exp")).find("t.json: exp: expected a non-negative integer"), 0u);
  EXPECT_EQ(*j.GetDouble("exp"), 1000.0);
  // Bounds of the caller's.
  EXPECT_EQ(*j.GetIntIn("neg", -1, 1), -1);
  EXPECT_EQ(Message(j.GetIntIn("zero", 1, 65536)), "t.json: zero: 0 is outside 1..65536");
  EXPECT_EQ(Message(j.GetIntIn("neg", 0, INT64_MAX)),
            "t.json: neg: -1 is outside 0..9223372036854775807");
  EXPECT_EQ(Message(j.GetIntIn("two", 0, 4)),
            "t.json: two: expected an integer, found a number (2.0)");
}

TEST(JsonValue, NestedPathsNameListElementsAndMembers) {
  JsonValue j = Root(R"({"loops": [{"schedule": {"kind": "serial"}}, {},
                                   {"schedule": {"kind": 3, "blocks": [2, "x"]}}]})",
                     "plan.json");
  StatusOr<std::vector<JsonValue>> loops = j.GetArray("loops");
  ASSERT_TRUE(loops.ok());
  ASSERT_EQ(loops->size(), 3u);
  EXPECT_EQ((*loops)[2].path(), "loops[2]");
  EXPECT_EQ(*(*loops)[0].GetObject("schedule")->GetString("kind"), "serial");
  EXPECT_EQ(Message((*loops)[1].GetObject("schedule")), "plan.json: loops[1].schedule: missing");
  StatusOr<JsonValue> schedule = (*loops)[2].GetObject("schedule");
  ASSERT_TRUE(schedule.ok());
  EXPECT_EQ(Message(schedule->GetString("kind")),
            "plan.json: loops[2].schedule.kind: expected a string, found a number (3)");
  StatusOr<std::vector<JsonValue>> blocks = schedule->GetArray("blocks");
  ASSERT_TRUE(blocks.ok());
  EXPECT_EQ(Message((*blocks)[1].AsInt()),
            "plan.json: loops[2].schedule.blocks[1]: expected an integer, found a string (\"x\")");
  // The caller's own checks use the same form.
  EXPECT_EQ(schedule->Error("unknown schedule").message(),
            "plan.json: loops[2].schedule: unknown schedule");
  EXPECT_EQ(schedule->FieldError("dim", "not a dimension").message(),
            "plan.json: loops[2].schedule.dim: not a dimension");
  EXPECT_EQ(j.Error("expected a plan").message(), "plan.json: (top level): expected a plan");
  EXPECT_EQ(j.FieldError("workers", "too many").message(), "plan.json: workers: too many");
}

TEST(JsonValue, OptionalFieldsTakeTheirDefaultOnlyWhenAbsent) {
  JsonValue j = Root(R"({"shard": "hash", "a": -1, "seed": 3, "on": true, "n": 4, "bad": "1"})");
  EXPECT_EQ(*j.GetStringOr("shard", ""), "hash");
  EXPECT_EQ(*j.GetStringOr("init", "zeros"), "zeros");
  EXPECT_EQ(*j.GetDoubleOr("a", 0), -1.0);
  EXPECT_EQ(*j.GetDoubleOr("b", 0.5), 0.5);
  EXPECT_EQ(*j.GetUintOr("seed", 0), 3u);
  EXPECT_EQ(*j.GetUintOr("none", 9), 9u);
  EXPECT_EQ(*j.GetIntOr("n", 0), 4);
  EXPECT_EQ(*j.GetIntOr("m", -2), -2);
  EXPECT_EQ(*j.GetBoolOr("on", false), true);
  EXPECT_EQ(*j.GetBoolOr("off", false), false);
  // Present with another type: an error, not the default.
  EXPECT_EQ(Message(j.GetDoubleOr("bad", 0)),
            "t.json: bad: expected a number, found a string (\"1\")");
  EXPECT_EQ(Message(j.GetStringOr("n", "")), "t.json: n: expected a string, found a number (4)");
  EXPECT_EQ(Message(j.GetUintOr("a", 0)),
            "t.json: a: expected a non-negative integer, found a number (-1)");
  // Not an object at all.
  EXPECT_EQ(Message(Root("7").GetStringOr("x", "")),
            "t.json: (top level): expected an object, found a number (7)");

  EXPECT_TRUE(j.Has("shard"));
  EXPECT_FALSE(j.Has("init"));
  EXPECT_FALSE(Root("[1]").Has("shard"));
  EXPECT_FALSE(j.Find("init").has_value());
  std::optional<JsonValue> a = j.Find("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->path(), "a");
  EXPECT_EQ(*a->AsInt(), -1);
}

TEST(JsonValue, MembersAndElementsKeepTheOrderOfTheText) {
  JsonValue j = Root(R"({"zeta": 1, "alpha": [true, false], "mid": "m"})");
  StatusOr<std::vector<std::pair<std::string, JsonValue>>> m = j.Members();
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].first, "zeta");
  EXPECT_EQ((*m)[1].first, "alpha");
  EXPECT_EQ((*m)[2].first, "mid");
  EXPECT_EQ((*m)[1].second.path(), "alpha");
  StatusOr<std::vector<JsonValue>> e = (*m)[1].second.Elements();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[1].path(), "alpha[1]");
  EXPECT_EQ(*(*e)[0].AsBool(), true);
  EXPECT_EQ(*(*e)[1].AsBool(), false);
  // What raw() writes keeps the order too.
  EXPECT_EQ(j.raw().dump(), R"({"zeta":1,"alpha":[true,false],"mid":"m"})");
}

TEST(JsonValue, AViewKeepsItsDocumentAlive) {
  std::optional<JsonValue> kind;
  {
    StatusOr<JsonValue> root = ParseJson(R"({"schedule": {"kind": "wavefront"}})", "p.json");
    ASSERT_TRUE(root.ok());
    kind = root->GetObject("schedule")->Get("kind").value();
  }
  ASSERT_TRUE(kind.has_value());
  EXPECT_EQ(*kind->AsString(), "wavefront");
  EXPECT_EQ(kind->source(), "p.json");
  EXPECT_EQ(kind->path(), "schedule.kind");
}

TEST(JsonValue, DescribeCutsLongStringsBetweenCharacters) {
  // 39 ASCII letters, then a 2-byte character across the 40-byte cut.
  const std::string text = std::string(39, 'a') + "\xc3\xa9" + std::string(20, 'b');
  JsonValue j = Root(nlohmann::json({{"s", text}}).dump());
  std::string d = j.Get("s")->Describe();
  EXPECT_EQ(d, "a string (\"" + std::string(39, 'a') + "\"...)");
  EXPECT_EQ(Root("[1]").Describe(), "a list");
  EXPECT_EQ(Root("{\"a\": 1}").Describe(), "an object");
  EXPECT_EQ(Root("true").Describe(), "a boolean (true)");
  EXPECT_EQ(Root("null").Describe(), "null");
}

}  // namespace
}  // namespace rigel
