// The kernel's routes and policy rules as `ip -j route show table all` and
// `ip -j rule show` print them (iproute2's JSON output): pure parsers, so the
// multi-NIC views of doctor and devices are tested over captured text.
#pragma once

#include <string>
#include <vector>

namespace rdmacheck {

// One row of `ip -j rule show` ({"priority":32765,"src":"198.18.0.1","table":"101"};
// "src":"all" without srclen matches every source).
struct PolicyRule {
  int priority = 0;
  std::string src = "all";
  int srclen = -1;  // -1: a host address (no "srclen" key) or "all"
  std::string table;
};

// One row of `ip -j route show table all` ({"dst":"198.18.0.0/24","dev":"eth0",
// "prefsrc":"198.18.0.1"}; no "table" key means main).
struct Route {
  std::string type = "unicast";
  std::string dst;
  std::string dev;
  std::string table = "main";
  std::string prefsrc;
};

// The commands whose output these parse, as a capture records them.
inline constexpr const char* kIpRules = "ip -j rule show";
// Both families: iproute2 (6.1) lists IPv4 and IPv6 routes for "table all".
inline constexpr const char* kIpRoutes = "ip -j route show table all";

std::vector<PolicyRule> parse_ip_rules(const std::string& json_text);
std::vector<Route> parse_ip_routes(const std::string& json_text);

// Whether RULE sends traffic from ADDRESS (IPv4 text) to its own table
// (not local, main or default).
bool rule_selects_source(const PolicyRule& rule, const std::string& address);

// The subnets the main table reaches through DEV directly ("198.18.0.0/24"):
// unicast routes with a destination, in the kernel's order.
std::vector<std::string> subnets_via(const std::vector<Route>& routes, const std::string& dev);

}  // namespace rdmacheck
