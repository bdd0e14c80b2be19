#include "net/routes.h"

#include <arpa/inet.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

namespace rdmacheck {
namespace {

nlohmann::json parse_array(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_array() ? j : nlohmann::json::array();
}

std::string text_of(const nlohmann::json& j, const char* key, const std::string& dflt) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : dflt;
}

bool own_table(const std::string& t) { return t != "local" && t != "main" && t != "default"; }

std::optional<uint32_t> ipv4(const std::string& a) {
  in_addr v{};
  if (inet_pton(AF_INET, a.c_str(), &v) != 1) return std::nullopt;
  return ntohl(v.s_addr);
}

}  // namespace

std::vector<PolicyRule> parse_ip_rules(const std::string& json_text) {
  std::vector<PolicyRule> out;
  for (const auto& j : parse_array(json_text)) {
    if (!j.is_object()) continue;
    PolicyRule r;
    r.priority = j.value("priority", 0);
    r.src = text_of(j, "src", "all");
    r.srclen =
        j.contains("srclen") && j["srclen"].is_number_integer() ? j["srclen"].get<int>() : -1;
    r.table = text_of(j, "table", "");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Route> parse_ip_routes(const std::string& json_text) {
  std::vector<Route> out;
  for (const auto& j : parse_array(json_text)) {
    if (!j.is_object()) continue;
    Route r;
    r.type = text_of(j, "type", "unicast");
    r.dst = text_of(j, "dst", "");
    r.dev = text_of(j, "dev", "");
    r.table = text_of(j, "table", "main");
    r.prefsrc = text_of(j, "prefsrc", "");
    out.push_back(std::move(r));
  }
  return out;
}

bool rule_selects_source(const PolicyRule& rule, const std::string& address) {
  if (!own_table(rule.table) || rule.src == "all") return false;
  const auto want = ipv4(address);
  const auto src = ipv4(rule.src);
  if (!want || !src) return false;
  const int len = rule.srclen < 0 ? 32 : std::clamp(rule.srclen, 0, 32);
  const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  return (*want & mask) == (*src & mask);
}

std::vector<std::string> subnets_via(const std::vector<Route>& routes, const std::string& dev) {
  std::vector<std::string> out;
  for (const auto& r : routes) {
    if (r.dev != dev || r.type != "unicast" || r.table != "main" || r.dst.empty()) continue;
    if (r.dst == "default" || r.dst.find('/') == std::string::npos) continue;
    out.push_back(r.dst);
  }
  return out;
}

}  // namespace rdmacheck
