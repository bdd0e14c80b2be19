// --cm under the firewall: the connect request gets no answer.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

// (The healthy --cm ping shares the healthy pair's boot: ping_lab_test.cc.)
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
