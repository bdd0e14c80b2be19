// One printer for `check`: the report becomes one JSON document; the text
// (with colour on a terminal) is rendered from the same structs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "check/check.h"

namespace rdmacheck::check {

nlohmann::json to_json(const CheckReport& r);
std::string format_text(const CheckReport& r, const TextStyle& style = {});
// The local device the check used, for the ticket header (output/print.h).
inline std::vector<std::string> ticket_devices(const CheckReport& r) {
  return r.local ? std::vector<std::string>{r.local->device} : std::vector<std::string>{};
}

}  // namespace rdmacheck::check
