// `$ref` for the schema checker (testing/schema_check.h), which has none:
// inline_refs() replaces each {"$ref": R} by the schema R names, so a schema
// can reuse its own "$defs" and another checked-in schema whole. R is
// "#/json/pointer" (the same document), "name.json" or "name.json#/pointer"
// (another document of the set: JSON Schema resolves such a relative
// reference against the sibling $id). The schemas are not recursive, so
// inlining terminates; a reference cycle is reported, not expanded forever.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace rdmacheck {

// Schema documents by file name: {"check.schema.json": ..., "perf.schema.json": ...}.
using SchemaSet = std::map<std::string, nlohmann::json>;

// Document NAME of SET with every $ref replaced by its target. A keyword
// beside "$ref" other than an annotation (description, title, $comment) is
// an error: JSON Schema would apply both, an inlined copy only the target.
Result<nlohmann::json> inline_refs(const SchemaSet& set, const std::string& name);

// DIR/NAME with its references inlined; each document they name is read from DIR.
Result<nlohmann::json> load_schema(const std::string& dir, const std::string& name);

}  // namespace rdmacheck
