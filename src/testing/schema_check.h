// A JSON Schema checker for the subset rdmacheck's schemas use: type (one or
// a list), enum, required, properties, additionalProperties (false or a
// schema), items, minimum. Debian 12 packages no validator for nlohmann::json
// (libvalijson-dev is not installed here); this one is enough to keep the
// checked-in schemas and the printers honest in unit tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmacheck::perf {

// Every violation as "path: reason"; empty when DOC conforms to SCHEMA.
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace rdmacheck::perf
