// One printer for bw/lat: the report becomes one JSON document, and the text
// table is rendered from that document, so the two cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/text_style.h"
#include "perf/client.h"

namespace rdmacheck::perf {

nlohmann::json to_json(const PerfReport& r);
// The perftest-like table plus findings: format_document(to_json(r)).
std::string format_text(const PerfReport& r, const TextStyle& style = {});
// The same text from a to_json document (also a saved --json output), so the
// table and the JSON cannot drift apart.
std::string format_document(const nlohmann::json& doc);

}  // namespace rdmacheck::perf
