// --cm: the connection through librdmacm, healthy and under the firewall.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

std::vector<std::string> step_names(const nlohmann::json& steps) {
  std::vector<std::string> names;
  for (const auto& s : steps) names.push_back(s["name"]);
  return names;
}

TEST(CmLab, HealthyConnectionThroughRdmaCm) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 --cm -n 3 --json"});
  ASSERT_EQ(r.exit, 0) << r.console;
  const auto& p = run_output(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["summary"]["received"], 3);
  EXPECT_EQ(step_names(p["timeline"]["local"]),
            (std::vector<std::string>{"ADDR_RESOLVED", "ROUTE_RESOLVED", "ESTABLISHED", "RTS"}));
  EXPECT_EQ(step_names(p["timeline"]["peer"]),
            (std::vector<std::string>{"CONNECT_REQUEST", "ESTABLISHED", "RTS"}));
  for (const auto& s : p["timeline"]["local"]) EXPECT_EQ(s["ok"], true);
}

TEST(CmLab, FirewallIsNamedWhenTheConnectRequestGetsNoAnswer) {
  const auto r = run_lab({"--fault", "firewall", "--run", "h2:rdmacheck ping h1 --cm --json"});
  EXPECT_EQ(r.exit, 2) << r.console;
  const auto& p = run_output(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["failed_stage"], "cm connect");
  EXPECT_LE(p["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
  const auto ids = finding_ids(p["findings"]);
  ASSERT_FALSE(ids.empty()) << p.dump(2);
  EXPECT_EQ(ids[0], "firewall-blocks-roce");
}

}  // namespace
}  // namespace rdmacheck::labtest
