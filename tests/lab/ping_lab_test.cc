// The connection layer on the real stack: serve on h1, ping from h2.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

TEST(PingLab, HealthyRcPingPong) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 --json"});
  ASSERT_EQ(r.exit, 0) << r.console;
  const auto& ping = run_output(r, "h2");
  ASSERT_TRUE(ping.is_object()) << r.console;
  EXPECT_EQ(ping["ok"], true);
  EXPECT_EQ(ping["summary"]["sent"], 5);
  EXPECT_EQ(ping["summary"]["received"], 5);
  EXPECT_GT(ping["summary"]["min_us"].get<double>(), 0);
  EXPECT_EQ(ping["peer"]["hostname"], "h1");
  EXPECT_EQ(ping["local"]["gid_type"], "RoCE v2");
  // Both sides went RESET -> INIT -> RTR -> RTS.
  for (const char* side : {"local", "peer"}) {
    std::vector<std::string> names;
    for (const auto& s : ping["timeline"][side]) names.push_back(s["name"]);
    EXPECT_EQ(names, (std::vector<std::string>{"INIT", "RTR", "RTS"})) << side;
  }
  // The size ladder crossed the path MTU (1024) with multi-packet messages.
  ASSERT_FALSE(ping["ladder"].empty());
  EXPECT_EQ(ping["ladder"].back()["size"], 8192);
  for (const auto& l : ping["ladder"]) EXPECT_EQ(l["ok"], true) << l.dump();
  EXPECT_TRUE(ping["findings"].empty()) << ping["findings"].dump(2);
}

TEST(PingLab, FirewallDroppingRoceEndsBoundedAndNamed) {
  const auto r = run_lab({"--setup", "h1:iptables -I INPUT -p udp --dport 4791 -j DROP", "--run",
                          "h2:rdmacheck ping h1 --json"});
  EXPECT_EQ(r.exit, 2) << r.console;
  const auto& ping = run_output(r, "h2");
  ASSERT_TRUE(ping.is_object()) << r.console;
  EXPECT_EQ(ping["ok"], false);
  EXPECT_EQ(ping["failed_stage"], "traffic");
  EXPECT_NE(ping["error"].get<std::string>().find("retry counter exceeded"), std::string::npos);
  EXPECT_LE(ping["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
  const auto ids = finding_ids(ping["findings"]);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], "firewall-blocks-roce");
  EXPECT_NE(ping["findings"][0]["evidence"][0].get<std::string>().find("--dport 4791 -j DROP"),
            std::string::npos);
}

TEST(PingLab, AForcedLinkLocalGidIsWarnedAbout) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 -x 0 -n 1 --no-ladder --json"});
  const auto& p = run_output(r, "h2");
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["local"]["gid_index"], 0);
  ASSERT_FALSE(p["warnings"].empty()) << p.dump(2);
  EXPECT_NE(p["warnings"][0].get<std::string>().find("link-local"), std::string::npos);
  EXPECT_GE(r.exit, 1);  // a warning at least, whatever the transfer did
}

TEST(PingLab, NoServerIsNamed) {
  const auto r = run_lab({"--fault", "no-server", "--run", "h2:rdmacheck ping h1 --json"});
  EXPECT_EQ(r.exit, 2) << r.console;
  EXPECT_EQ(finding_ids(run_output(r, "h2")["findings"]),
            std::vector<std::string>{"server-not-listening"});
}

}  // namespace
}  // namespace rdmacheck::labtest
