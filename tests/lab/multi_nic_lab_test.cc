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

// The default check through the device on eth0, then `ping h1-2` through the
// one on eth1, on both ends: RXE_ON_ETH0/1 name them in this device order.
// With SECOND_WIRE_DOWN, h2 then takes its eth1 (and so that rxe) down and
// checks h1 again: a fault on the second wire leaves a check on the first
// alone. (The lab's own `--fault link-down@h2-2` makes the same command:
// plan_test holds it; one boot does both here.)
void expect_route_picks_device(const std::vector<std::string>& extra,
                               const std::string& rxe_on_eth0, const std::string& rxe_on_eth1,
                               bool second_wire_down = false) {
  auto args = kCheckThenPingWire2;
  args.insert(args.end(), extra.begin(), extra.end());
  if (second_wire_down) {
    args.insert(args.end(),
                {"--run", "h2:ip link set eth1 down", "--run", "h2:rdmacheck check h1 --json"});
  }
  const auto r = run_lab(args);
  EXPECT_LE(r.exit, 1) << r.console;
  expect_healthy_check_through(r, run_output(r, "h2"), rxe_on_eth0);
  expect_two_wires(r, rxe_on_eth0, rxe_on_eth1);
  // h1-2 is h1's address on the second wire: both ends use the device on eth1.
  const auto& p = run_output(r, "h2", 1);
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["ok"], true) << p.dump(2).substr(0, 2000);
  expect_sides(p, {rxe_on_eth1, "eth1"}, {rxe_on_eth1, "eth1"}, "ping h1-2");
  if (second_wire_down) {
    EXPECT_EQ(run_exit(r, "h2", 2), 0) << r.console;
    expect_healthy_check_through(r, run_output(r, "h2", 3), rxe_on_eth0);
  }
}

TEST(MultiNicLab, TwoNicsCheckGoesThroughTheDeviceThatRoutesToThePeerAndSurvivesWire2Down) {
  expect_route_picks_device({}, "rxe0", "rxe1", /*second_wire_down=*/true);
}

TEST(MultiNicLab, ReversedDeviceOrderStillUsesTheDeviceOnTheRoutedNic) {
  // rxe0 sits on eth1 now: "the first device" would be the wrong one.
  expect_route_picks_device({"--device-order", "reversed"}, "rxe1", "rxe0");
}

// The first finding of a run's report (a ping's or a check's top one).
nlohmann::json top_finding(const nlohmann::json& report) {
  if (report.contains("top_findings") && !report["top_findings"].empty()) {
    return report["top_findings"][0];
  }
  if (report.contains("findings") && !report["findings"].empty()) return report["findings"][0];
  return nullptr;
}

void expect_top(const nlohmann::json& report, const std::string& id, const std::string& fix_has,
                const std::string& what) {
  ASSERT_TRUE(report.is_object()) << what;
  const auto f = top_finding(report);
  ASSERT_TRUE(f.is_object()) << what << ": " << report.dump(2).substr(0, 3000);
  EXPECT_EQ(f["id"], id) << what << ": " << f.dump(2);
  EXPECT_EQ(f["severity"], "fail") << what << ": " << f.dump(2);
  EXPECT_NE(f["fix"].get<std::string>().find(fix_has), std::string::npos)
      << what << ": " << f.dump(2);
}

// The multi-NIC pitfalls, one boot: h1 also runs a server forced onto its
// second NIC (serve -d, port 18600); h2 forces -d onto the NIC that does not
// route to h1, talks to that forced server, sends rdma_cm from the other
// NIC's address (--src), from an address on a netdev without an RDMA device,
// and last without the rdma_ucm module (and without module autoloading, which
// would bring it back: librdmacm asks RDMA netlink for its character device).
TEST(MultiNicLab, MultiNicPitfallsAreNamedWithTheirFix) {
  const std::string forced_server =
      "h1:rdmacheck serve --psk-file $RDMACHECK_PSK_FILE -d rxe1 --port 18600 "
      "> /tmp/serve-18600.log 2>&1 & "
      "for i in $(seq 100); do grep -q listening /tmp/serve-18600.log && break; sleep 0.1; done; "
      "grep -q listening /tmp/serve-18600.log";
  // A server bound to h1's second address only (serve --bind): h2 connects
  // to h1's name, the first wire's address, and is refused as if nothing ran.
  const std::string bound_server =
      "h1:rdmacheck serve --psk-file $RDMACHECK_PSK_FILE --bind 198.18.1.1 --port 18601 "
      "> /tmp/serve-18601.log 2>&1 & "
      "for i in $(seq 100); do grep -q listening /tmp/serve-18601.log && break; sleep 0.1; done; "
      "grep -q listening /tmp/serve-18601.log";
  const std::string plain_netdev =
      "h2:ip link add dummy0 type dummy && ip addr add 10.99.0.2/24 dev dummy0 && "
      "ip link set dummy0 up";
  const auto r = run_lab(
      {"--nics",
       "2",
       "--setup",
       forced_server,
       "--setup",
       bound_server,
       "--setup",
       plain_netdev,
       "--run",
       "h2:rdmacheck ping h1 -n 3 -d rxe1 --json",
       "--run",
       "h2:rdmacheck ping h1 -n 3 --port 18600 --json",
       "--run",
       "h2:rdmacheck check h1 --cm --src 198.18.1.2 --quick --json",
       "--run",
       "h2:rdmacheck ping h1 -n 3 --cm --src 10.99.0.2 --json",
       "--run",
       "h2:rdmacheck ping h1 -n 3 --port 18601 --json",
       "--run",
       "h2:rdmacheck bw h1 -d rxe1 -D 1 --json",
       "--run",
       "h2:rdmacheck lat h1 -x 0 -n 100 --json",
       "--run",
       "h2:rdmacheck ping h1 -n 3 --cm --src 198.18.1.2 --json",
       "--run",
       "h2:sysctl -qw kernel.modprobe=/bin/false && rmmod rdma_ucm && rdmacheck ping h1 -n 3 "
       "--cm --json"});
  ASSERT_TRUE(r.doc.is_object()) << r.console;
  // -d onto the NIC on eth1: its GID is 198.18.1.2, h1 is reached from 198.18.0.2.
  const auto& forced = run_output(r, "h2", 0);
  expect_top(forced, "forced-device-unusable", "drop -d", "ping -d rxe1");
  EXPECT_NE(top_finding(forced)["summary"].get<std::string>().find("eth0"), std::string::npos)
      << top_finding(forced).dump(2);
  EXPECT_EQ(run_exit(r, "h2", 0), 2);
  // The server forced onto rxe1 answers for 198.18.0.1 with 198.18.1.1's GID.
  const auto& off = run_output(r, "h2", 1);
  expect_top(off, "peer-gid-off-address", "without -d rxe1", "ping the forced server");
  ASSERT_TRUE(off["peer"].is_object()) << off.dump(2).substr(0, 2000);
  EXPECT_EQ(off["peer"]["forced"], "-d rxe1");
  EXPECT_EQ(off["peer"]["local_address"], "198.18.0.1");
  // rdma_cm from eth1's address while the route to h1 leaves from eth0.
  const auto& cm = run_output(r, "h2", 2);
  ASSERT_TRUE(cm.is_object()) << r.console;
  EXPECT_EQ(cm["layers"][1]["status"], "fail") << cm["layers"][1].dump(2);
  const auto top = top_finding(cm);
  ASSERT_TRUE(top.is_object()) << cm.dump(2).substr(0, 3000);
  EXPECT_EQ(top["id"], "cm-device-differs") << top.dump(2);
  EXPECT_NE(top["fix"].get<std::string>().find("--src 198.18.0.2"), std::string::npos)
      << top.dump(2);
  EXPECT_NE(top["fix"].get<std::string>().find("UCX_RDMA_CM_SOURCE_ADDRESS"), std::string::npos);
  // rdma_cm from an address no RDMA device carries, then without rdma_ucm:
  // the host's cause, not the peer's rejection.
  expect_top(run_output(r, "h2", 3), "cm-source-without-device", "--src", "--cm --src 10.99.0.2");
  // Bound elsewhere refuses exactly as nothing listening: the finding names
  // both, with the command that shows where it listens.
  expect_top(run_output(r, "h2", 4), "server-not-listening", "--bind ADDR, connect to that ADDR",
             "a server bound to the second wire");
  EXPECT_NE(
      top_finding(run_output(r, "h2", 4))["fix"].get<std::string>().find("ss -ltn sport = :18601"),
      std::string::npos);
  // bw and lat put a failure down to what was forced as ping does: -d onto
  // the other NIC, -x onto the link-local GID (the server refuses a QP
  // towards a GID that is not this client's address).
  expect_top(run_output(r, "h2", 5), "forced-device-unusable", "give -d rxe0", "bw -d rxe1");
  EXPECT_EQ(run_exit(r, "h2", 5), 2);
  expect_top(run_output(r, "h2", 6), "forced-gid-unusable", "give -x 1", "lat -x 0");
  EXPECT_EQ(run_exit(r, "h2", 6), 2);
  // ping --cm --src onto the other NIC: the route's address in the fix.
  expect_top(run_output(r, "h2", 7), "cm-device-differs", "--src 198.18.0.2",
             "ping --cm --src 198.18.1.2");
  expect_top(run_output(r, "h2", 8), "rdma-cm-unavailable", "modprobe rdma_ucm",
             "--cm without rdma_ucm");
}

}  // namespace
}  // namespace rdmacheck::labtest
