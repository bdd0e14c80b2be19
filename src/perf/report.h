// One printer for bw/lat: the report becomes one JSON document, and the text
// table is rendered from that document, so the two cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "perf/client.h"

namespace rdmacheck::perf {

nlohmann::json to_json(const PerfReport& r);
// perftest-like table plus findings, from to_json's document.
std::string format_text(const nlohmann::json& doc);

}  // namespace rdmacheck::perf
