#include "testing/schema_refs.h"

#include <gtest/gtest.h>

#include "testing/schema_check.h"

namespace rdmacheck {
namespace {

using nlohmann::json;

SchemaSet two_documents() {
  return {{"a.json", json::parse(R"({
             "type": "object",
             "properties": {"x": {"$ref": "#/$defs/small"}, "y": {"$ref": "b.json"}},
             "$defs": {"small": {"description": "an annotation may stand beside $ref", "$ref": "#/$defs/tiny"},
                       "tiny": {"type": "integer", "minimum": 0}}})")},
          {"b.json", json::parse(R"({
             "type": "object", "required": ["z"],
             "properties": {"z": {"$ref": "#/$defs/name"}},
             "$defs": {"name": {"enum": ["one", "two"]}}})")}};
}

TEST(SchemaRefs, ReferencesAreReplacedByTheirTargets) {
  const auto s = inline_refs(two_documents(), "a.json");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ((*s)["properties"]["x"], json::parse(R"({"type": "integer", "minimum": 0})"));
  // b.json's own "#/..." points into b.json, not into the document that referred to it.
  EXPECT_EQ((*s)["properties"]["y"]["properties"]["z"], json::parse(R"({"enum": ["one", "two"]})"));
  EXPECT_EQ(s->dump().find("$ref"), std::string::npos) << s->dump(2);
}

TEST(SchemaRefs, TheCheckerAppliesTheReferencedSchemas) {
  const auto s = inline_refs(two_documents(), "a.json");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(perf::schema_violations(*s, json::parse(R"({"x": 3, "y": {"z": "two"}})")),
            std::vector<std::string>{});
  EXPECT_EQ(perf::schema_violations(*s, json::parse(R"({"x": -1, "y": {"z": "three"}})")),
            (std::vector<std::string>{"$.x: -1 is below the minimum 0",
                                      R"($.y.z: "three" is not one of ["one","two"])"}));
}

TEST(SchemaRefs, BrokenReferencesAreErrors) {
  const auto error_of = [](const SchemaSet& set) {
    const auto s = inline_refs(set, "a.json");
    return s ? std::string("no error") : s.error().message();
  };
  EXPECT_NE(
      error_of({{"a.json", json::parse(R"({"$ref": "c.json"})")}}).find("no schema named c.json"),
      std::string::npos);
  EXPECT_NE(error_of({{"a.json", json::parse(R"({"$ref": "#/$defs/none"})")}})
                .find("nothing at /$defs/none of a.json"),
            std::string::npos);
  EXPECT_NE(error_of({{"a.json", json::parse(R"({"$ref": "#"})")}}).find("a cycle"),
            std::string::npos);
  EXPECT_NE(error_of({{"a.json", json::parse(R"({"type": "object", "properties": {
                         "x": {"$ref": "#/$defs/n", "minimum": 1}}, "$defs": {"n": {}}})")}})
                .find("'minimum' beside $ref"),
            std::string::npos);
}

TEST(SchemaRefs, TheCheckedInSchemasLoadWithEveryReferenceResolved) {
  for (const char* name : {"check.schema.json", "perf.schema.json", "doctor.schema.json",
                           "ping.schema.json", "devices.schema.json", "qps.schema.json",
                           "explain.schema.json", "monitor.schema.json", "common.schema.json"}) {
    const auto s = load_schema(RDMACHECK_SCHEMAS, name);
    ASSERT_TRUE(s) << name << ": " << s.error().message();
    EXPECT_EQ(s->dump().find("\"$ref\""), std::string::npos) << name;
  }
  EXPECT_FALSE(load_schema(RDMACHECK_SCHEMAS, "none.schema.json"));
}

}  // namespace
}  // namespace rdmacheck
