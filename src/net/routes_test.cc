// The parsers over real `ip -j` output (iproute2 6.1.0): tests/fixtures/ip-json.
#include "net/routes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace rdmacheck {
namespace {

std::string ip_json(const std::string& name) {
  std::ifstream in(std::string(RDMACHECK_FIXTURES) + "/ip-json/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The development VM: the three default rules, one NIC, IPv4 and IPv6 routes
// in one "table all" listing (local and broadcast ones in table local).
TEST(Routes, TheDefaultRulesAndOneNicsRoutes) {
  const auto rules = parse_ip_rules(ip_json("dev-vm.rule.json"));
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].table, "local");
  EXPECT_EQ(rules[1].priority, 32766);
  EXPECT_EQ(rules[1].src, "all");
  for (const auto& r : rules) EXPECT_FALSE(rule_selects_source(r, "192.0.2.2"));
  const auto routes = parse_ip_routes(ip_json("dev-vm.route.json"));
  ASSERT_FALSE(routes.empty());
  EXPECT_EQ(routes[0].dst, "default");
  EXPECT_EQ(routes[0].table, "main");  // no "table" key
  EXPECT_EQ(subnets_via(routes, "eth0"),
            (std::vector<std::string>{"192.0.2.0/24", "fd00::/64", "fe80::/64"}));
  EXPECT_TRUE(subnets_via(routes, "lo").empty());  // only local/broadcast routes there
}

// A rule per NIC, as iproute2 prints `ip rule add from 198.18.0.11 table 101`
// and a whole-subnet `from 10.0.0.0/8`.
TEST(Routes, APolicyRuleSelectsItsSourcesOnly) {
  const auto rules =
      parse_ip_rules(R"([{"priority":0,"src":"all","table":"local"},)"
                     R"({"priority":32764,"src":"10.0.0.0","srclen":8,"table":"102"},)"
                     R"({"priority":32765,"src":"198.18.0.11","table":"101"},)"
                     R"({"priority":32766,"src":"all","table":"main"}])");
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[2].srclen, -1);
  EXPECT_TRUE(rule_selects_source(rules[2], "198.18.0.11"));
  EXPECT_FALSE(rule_selects_source(rules[2], "198.18.0.1"));
  EXPECT_TRUE(rule_selects_source(rules[1], "10.9.9.2"));
  EXPECT_FALSE(rule_selects_source(rules[3], "198.18.0.11"));  // main is not a NIC's own table
  EXPECT_TRUE(parse_ip_rules("not json").empty());
}

}  // namespace
}  // namespace rdmacheck
