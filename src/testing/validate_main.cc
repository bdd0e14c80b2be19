// schema_validate DIR NAME FILE: holds the JSON document in FILE to the schema
// DIR/NAME (its $refs inlined), printing each violation; exit 0 when it
// conforms, 1 when not, 2 when a file cannot be read. Test-only: ctest runs
// the real binary and checks what it printed (tests/cli/expect_schema).
#include <cstdio>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace {

int validate(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: schema_validate SCHEMA_DIR SCHEMA_NAME FILE\n");
    return 2;
  }
  const auto schema = rdmacheck::load_schema(argv[1], argv[2]);
  if (!schema) {
    std::fprintf(stderr, "schema_validate: %s\n", schema.error().message().c_str());
    return 2;
  }
  std::ifstream in(argv[3]);
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    std::fprintf(stderr, "schema_validate: %s is not one JSON document\n", argv[3]);
    return 2;
  }
  const auto v = rdmacheck::perf::schema_violations(*schema, doc);
  for (const auto& line : v) std::printf("%s\n", line.c_str());
  return v.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return validate(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "schema_validate: %s\n", e.what());
    return 2;
  }
}
