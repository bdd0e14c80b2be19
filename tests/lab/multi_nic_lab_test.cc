// Hosts with two NICs (`lab --nics 2`): every test goes through the device
// whose netdev routes to the peer, on both sides, whatever order the devices
// were created in, and a fault on the second wire leaves the first alone.
#include <gtest/gtest.h>

#include <string>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

struct Side {
  std::string device;
  std::string netdev;
};

// Each report that ran a test names the device and netdev it used on
// both ends ("local", "peer": the facts each side sent).
void expect_sides(const nlohmann::json& report, const Side& local, const Side& peer,
                  const std::string& what) {
  ASSERT_TRUE(report["local"].is_object()) << what << ": " << report.dump(2).substr(0, 2000);
  ASSERT_TRUE(report["peer"].is_object()) << what << ": " << report.dump(2).substr(0, 2000);
  EXPECT_EQ(report["local"]["device"], local.device) << what << ": " << report["local"].dump(2);
  EXPECT_EQ(report["local"]["netdev"], local.netdev) << what << ": " << report["local"].dump(2);
  EXPECT_EQ(report["peer"]["device"], peer.device) << what << ": " << report["peer"].dump(2);
  EXPECT_EQ(report["peer"]["netdev"], peer.netdev) << what << ": " << report["peer"].dump(2);
}

// A check that passes every layer (PASS or WARN, no fail finding) through
// DEVICE on eth0 on both hosts: the connection layer's ping and every
// performance test included.
void expect_healthy_check_through(const LabRun& r, const nlohmann::json& c,
                                  const std::string& device) {
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(c["command"], "check");
  for (size_t l = 0; l < 3; ++l) {
    const std::string st = c["layers"][l]["status"];
    EXPECT_TRUE(st == "pass" || st == "warn") << c["layers"][l].dump(2);
    for (const auto& f : c["layers"][l]["findings"]) EXPECT_NE(f["severity"], "fail") << f.dump(2);
  }
  const Side eth0{device, "eth0"};
  expect_sides(c, eth0, eth0, "check");
  EXPECT_NE(c["local"]["choice"].get<std::string>().find("198.18.0.2"), std::string::npos)
      << c["local"]["choice"];
  EXPECT_NE(c["peer"]["choice"].get<std::string>().find("198.18.0.1"), std::string::npos)
      << c["peer"]["choice"];
  ASSERT_FALSE(c["pings"].empty());
  expect_sides(c["pings"][0], eth0, eth0, "check's ping");
  ASSERT_FALSE(c["perf"].empty());
  for (const auto& p : c["perf"]) expect_sides(p, eth0, eth0, "check's perf test");
}

// NIC k of host H on wire k: the lab says so, and counts each wire apart.
void expect_two_wires(const LabRun& r, const std::string& rxe_on_eth0,
                      const std::string& rxe_on_eth1) {
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  for (const auto& h : r.doc["hosts"]) {
    ASSERT_EQ(h["nics"].size(), 2u) << h.dump(2);
    EXPECT_EQ(h["nics"][0]["netdev"], "eth0");
    EXPECT_EQ(h["nics"][0]["device"], rxe_on_eth0);
    EXPECT_EQ(h["nics"][1]["netdev"], "eth1");
    EXPECT_EQ(h["nics"][1]["device"], rxe_on_eth1);
    EXPECT_EQ(h["nics"][1]["name"], h["name"].get<std::string>() + "-2");
  }
  ASSERT_EQ(r.doc["wire"].size(), 4u) << r.doc["wire"].dump(2);
  for (size_t i = 0; i < 4; ++i) {
    const auto& w = r.doc["wire"][i];
    EXPECT_EQ(w["wire"], i < 2 ? 1 : 2) << w.dump();
    EXPECT_EQ(w["netdev"], i < 2 ? "eth0" : "eth1") << w.dump();
    EXPECT_GT(w["hub_from"].get<uint64_t>(), 0u) << "every NIC spoke on its wire: " << w.dump();
  }
}

const std::vector<std::string> kCheckThenPingWire2 = {"--nics", "2",
                                                      "--run",  "h2:rdmacheck check h1 --json",
                                                      "--run",  "h2:rdmacheck ping h1-2 --json"};

TEST(MultiNicLab, TwoNicsCheckGoesThroughTheDeviceThatRoutesToThePeer) {
  const auto r = run_lab(kCheckThenPingWire2);
  EXPECT_LE(r.exit, 1) << r.console;
  expect_healthy_check_through(r, run_output(r, "h2"), "rxe0");
  expect_two_wires(r, "rxe0", "rxe1");
  // h1-2 is h1's address on the second wire: both ends use the device on eth1.
  const auto& p = run_output(r, "h2", 1);
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["ok"], true) << p.dump(2).substr(0, 2000);
  expect_sides(p, {"rxe1", "eth1"}, {"rxe1", "eth1"}, "ping h1-2");
}

TEST(MultiNicLab, ReversedDeviceOrderStillUsesTheDeviceOnTheRoutedNic) {
  auto args = kCheckThenPingWire2;
  args.insert(args.end(), {"--device-order", "reversed"});
  const auto r = run_lab(args);
  EXPECT_LE(r.exit, 1) << r.console;
  // rxe0 sits on eth1 now: "the first device" would be the wrong one.
  expect_healthy_check_through(r, run_output(r, "h2"), "rxe1");
  expect_two_wires(r, "rxe1", "rxe0");
  const auto& p = run_output(r, "h2", 1);
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["ok"], true) << p.dump(2).substr(0, 2000);
  expect_sides(p, {"rxe0", "eth1"}, {"rxe0", "eth1"}, "ping h1-2");
}

TEST(MultiNicLab, SecondWireDownDoesNotFailACheckOnTheFirst) {
  // h2's eth1 (and so its rxe1) goes down before the test; the default check targets h1.
  const auto r = run_lab({"--nics", "2", "--fault", "link-down@h2-2"});
  EXPECT_LE(r.exit, 1) << r.console;
  expect_healthy_check_through(r, run_output(r, "h2"), "rxe0");
  ASSERT_TRUE(r.doc.is_object());
  EXPECT_EQ(r.doc["hosts"][1]["setup"][0], "ip link set eth1 down");
}

}  // namespace
}  // namespace rdmacheck::labtest
