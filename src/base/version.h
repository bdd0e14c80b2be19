#pragma once

namespace rdmacheck {
inline constexpr const char* kVersionString = "0.1.0";
// Every --json document's "schema_version": raised when a key changes meaning
// or goes away (adding a key does not raise it). The schemas in schemas/ hold it.
inline constexpr int kSchemaVersion = 2;
}  // namespace rdmacheck
