// One printer for `check`: the report becomes one JSON document; the text
// (with colour on a terminal) is rendered from the same structs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/text_style.h"
#include "check/check.h"

namespace rdmacheck::check {

nlohmann::json to_json(const CheckReport& r);
std::string format_text(const CheckReport& r, const TextStyle& style = {});

}  // namespace rdmacheck::check
