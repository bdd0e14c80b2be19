// `rdmacheck monitor --once`'s report: every round, as text or JSON
// (schemas/monitor.schema.json); output/print.h prints it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/text_style.h"
#include "monitor/daemon.h"

namespace rdmacheck::monitor {

nlohmann::json to_json(const MonitorReport& r);
std::string format_text(const MonitorReport& r, const TextStyle& style = {});

}  // namespace rdmacheck::monitor
