#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/text_style.h"
#include "conn/ping.h"

namespace rdmacheck::conn {

nlohmann::json to_json(const PingReport& r);
std::string format_text(const PingReport& r, const TextStyle& style = {});
// 0 healthy, 1 warnings, 2 failure.
int exit_status(const PingReport& r);

}  // namespace rdmacheck::conn
