#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text_style.h"
#include "conn/ping.h"

namespace rdmacheck::conn {

nlohmann::json to_json(const PingReport& r);
std::string format_text(const PingReport& r, const TextStyle& style = {});
// The local device the ping used, for the ticket header (output/print.h).
inline std::vector<std::string> ticket_devices(const PingReport& r) {
  return r.obs.local ? std::vector<std::string>{r.obs.local->device} : std::vector<std::string>{};
}
// 0 healthy, 1 warnings, 2 failure.
int exit_status(const PingReport& r);

}  // namespace rdmacheck::conn
