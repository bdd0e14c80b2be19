#include "check/check.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "check/report.h"
#include "doctor/test_fixture.h"
#include "testing/closed_port.h"
#include "testing/foreign_listener.h"

namespace rdmacheck::check {
namespace {

proto::HostFacts facts(int netdev_mtu, const std::string& gid_type, double rate) {
  proto::HostFacts f;
  f.hostname = "h";
  f.version = "0.1.0";
  f.netdev_mtu = netdev_mtu;
  f.active_mtu = netdev_mtu >= 4200 ? 4096 : 1024;
  f.gid_type = gid_type;
  f.rate_gbps = rate;
  return f;
}

std::vector<std::string> ids(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.emplace_back(id_name(f));
  return out;
}

TEST(Check, IdenticalHostsCompareClean) {
  EXPECT_TRUE(
      compare_hosts(facts(1500, "RoCE v2", 100), facts(1500, "RoCE v2", 100), "h1").empty());
}

TEST(Check, ComparisonNamesEachDifference) {
  auto peer = facts(9000, "RoCE v1", 25);
  peer.version = "0.2.0";
  const auto fs = compare_hosts(facts(1500, "RoCE v2", 100), peer, "h1");
  EXPECT_EQ(ids(fs), (std::vector<std::string>{"mtu-mismatch", "gid-type-mismatch",
                                               "link-rate-mismatch", "version-mismatch"}));
  EXPECT_EQ(fs[0].severity, Severity::kWarn);
  EXPECT_EQ(fs[1].severity, Severity::kFail);
  EXPECT_NE(fs[0].evidence[0].find("1500 here, 9000 on h1"), std::string::npos);
}

TEST(Check, LayerStatusAndExitStatus) {
  EXPECT_EQ(status_of({}), LayerStatus::kPass);
  EXPECT_EQ(status_of({Finding{FindingId::kDataValidated, Severity::kInfo}}), LayerStatus::kPass);
  EXPECT_EQ(status_of({Finding{FindingId::kMtuMismatch, Severity::kWarn}}), LayerStatus::kWarn);
  EXPECT_EQ(status_of({Finding{FindingId::kMtuMismatch, Severity::kWarn},
                       Finding{FindingId::kPortDown, Severity::kFail}}),
            LayerStatus::kFail);
  CheckReport r;
  r.layers = {LayerReport{Layer::kDevice, LayerStatus::kWarn},
              LayerReport{Layer::kConnection, LayerStatus::kPass},
              LayerReport{Layer::kPerformance, LayerStatus::kNotRun, "--quick"}};
  EXPECT_EQ(exit_status(r), 1);
  r.layers[1].status = LayerStatus::kFail;
  EXPECT_EQ(exit_status(r), 2);
  r.layers[1].status = LayerStatus::kPass;
  r.expired_in = "write bw";
  EXPECT_EQ(exit_status(r), 2);
}

// Each test of layer 3 in one line: what it runs, its sizes and how each size is bounded.
std::vector<std::string> plan_lines(const CheckOptions& o) {
  std::vector<std::string> out;
  for (const auto& s : perf_plan(o)) {
    out.push_back(fmt::format("{} {} sizes {}..{} ({}) n={} D={} warmup={} tx={} {}",
                              name_of(s.kind), name_of(s.op), s.sizes.front(), s.sizes.back(),
                              s.sizes.size(), s.iterations, s.duration_s, s.warmup_s, s.tx_depth,
                              name_of(s.transport)));
  }
  return out;
}

TEST(Check, PerformancePlan) {
  CheckOptions o;
  EXPECT_EQ(plan_lines(o), (std::vector<std::string>{
                               "bw write sizes 65536..65536 (1) n=0 D=2 warmup=0.5 tx=128 rc",
                               "lat write sizes 64..64 (1) n=200 D=0 warmup=0 tx=1 rc",
                               "lat send sizes 64..64 (1) n=200 D=0 warmup=0 tx=1 rc",
                               "bw read sizes 65536..65536 (1) n=0 D=2 warmup=0.5 tx=128 rc"}));
  o.full = true;
  EXPECT_EQ(plan_lines(o),
            (std::vector<std::string>{"bw write sizes 2..1048576 (20) n=0 D=2 warmup=0.5 tx=128 rc",
                                      "bw read sizes 2..1048576 (20) n=0 D=2 warmup=0.5 tx=128 rc",
                                      "bw send sizes 2..1048576 (20) n=0 D=2 warmup=0.5 tx=128 rc",
                                      "lat write sizes 2..4096 (12) n=200 D=0 warmup=0 tx=1 rc",
                                      "lat send sizes 2..4096 (12) n=200 D=0 warmup=0 tx=1 rc",
                                      "lat read sizes 2..4096 (12) n=200 D=0 warmup=0 tx=1 rc"}));
}

TEST(Check, TopFindingsPutFailuresFirst) {
  CheckReport r;
  r.layers = {
      LayerReport{Layer::kDevice,
                  LayerStatus::kWarn,
                  "",
                  {Finding{FindingId::kMtuNotJumbo, Severity::kWarn},
                   Finding{FindingId::kVersionMismatch, Severity::kInfo}}},
      LayerReport{Layer::kConnection,
                  LayerStatus::kFail,
                  "",
                  {Finding{FindingId::kFirewallBlocksRoce, Severity::kFail}}},
      LayerReport{Layer::kPerformance, LayerStatus::kNotRun, "the connection layer failed"}};
  EXPECT_EQ(ids(top_findings(r, 5)),
            (std::vector<std::string>{"firewall-blocks-roce", "mtu-not-jumbo"}));
  const std::string text = format_text(r);
  EXPECT_NE(text.find("== layer 3: performance == NOT RUN (the connection layer failed)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("result: FAIL"), std::string::npos);
  const auto j = to_json(r);
  EXPECT_EQ(j["layers"][1]["status"], "fail");
  EXPECT_EQ(j["layers"][2]["status"], "not_run");
  EXPECT_EQ(j["top_findings"][0]["id"], "firewall-blocks-roce");
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Each finding's summary, evidence and fix are printed once (in its layer);
// the summary names the ones to fix first by id. --brief is the layers, the
// first finding to fix and its fix.
TEST(Check, EvidenceOnceAndBriefText) {
  CheckReport r;
  Finding fw = make_finding(FindingId::kFirewallBlocksRoce, Severity::kFail, Layer::kConnection,
                            "UDP 4791 is dropped on h1");
  fw.host = "h1";
  fw.evidence = {"iptables -A INPUT -p udp -m udp --dport 4791 -j DROP"};
  fw.fix = "iptables -I INPUT -p udp --dport 4791 -j ACCEPT";
  Finding mtu =
      make_finding(FindingId::kMtuNotJumbo, Severity::kWarn, Layer::kDevice, "eth0 MTU 1500");
  mtu.evidence = {"/sys/class/net/eth0/mtu: 1500"};
  r.layers = {
      LayerReport{Layer::kDevice, LayerStatus::kWarn, "", {mtu}, 0.4},
      LayerReport{Layer::kConnection, LayerStatus::kFail, "", {fw}, 2.1},
      LayerReport{Layer::kPerformance, LayerStatus::kNotRun, "the connection layer failed"}};
  const std::string text = format_text(r);
  for (const std::string& once :
       {fw.summary, fw.evidence[0], fw.fix, mtu.summary, mtu.evidence[0]}) {
    EXPECT_EQ(occurrences(text, once), 1u) << once << "\n" << text;
  }
  EXPECT_NE(text.find("fix first (see above): firewall-blocks-roce, mtu-not-jumbo\n"),
            std::string::npos)
      << text;
  const std::string brief = format_text(r, {.detail = Detail::kBrief});
  EXPECT_EQ(brief,
            "rdmacheck check  (port 4792)\n"
            "  1 device       WARN (0.4 s)\n"
            "  2 connection   FAIL (2.1 s)\n"
            "  3 performance  NOT RUN (the connection layer failed)\n"
            "  first to fix: fail firewall-blocks-roce [h1]: UDP 4791 is dropped on h1\n"
            "  fix: iptables -I INPUT -p udp --dport 4791 -j ACCEPT\n"
            "result: FAIL (exit status 2)\n");
}

Finding doc(FindingId id, Severity s, const std::string& host, std::vector<std::string> evidence,
            const std::string& subject = "") {
  Finding f = make_finding(id, s, Layer::kDevice, std::string(name_of(id)) + " summary");
  f.host = host;
  f.evidence = std::move(evidence);
  f.subject = subject;
  return f;
}

TEST(Check, TheSameFindingFromBothHostsIsOneNamingBoth) {
  std::vector<Finding> fs;
  merge_finding(fs, doc(FindingId::kSoftwareRdmaDevice, Severity::kInfo, "h2",
                        {"the CPU does the transport", "rate 2.5 Gb/sec (1X SDR)"}));
  merge_finding(fs, doc(FindingId::kSoftwareRdmaDevice, Severity::kInfo, "h1",
                        {"the CPU does the transport", "rxe0 on eth0"}));
  merge_finding(fs, doc(FindingId::kSoftwareRdmaDevice, Severity::kInfo, "h1",
                        {"the CPU does the transport"}));  // again: nothing twice
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].host, "h2, h1");
  EXPECT_EQ(fs[0].evidence,
            (std::vector<std::string>{"h2, h1: the CPU does the transport",
                                      "h2: rate 2.5 Gb/sec (1X SDR)", "h1: rxe0 on eth0"}));
}

TEST(Check, ThePortUnderTestIsTheForcedOneOrTheFirstActive) {
  const std::vector<std::pair<std::string, std::string>> ports = {
      {"mlx4_0/1", "ACTIVE"}, {"mlx4_0/2", "DOWN"}, {"mlx5_0/1", "ACTIVE"}};
  EXPECT_EQ(port_under_test(ports, "", 0), "mlx4_0/1");
  EXPECT_EQ(port_under_test(ports, "mlx5_0", 0), "mlx5_0/1");
  EXPECT_EQ(port_under_test(ports, "", 2), "mlx4_0/2");
  EXPECT_EQ(port_under_test(ports, "mlx4_0", 2), "mlx4_0/2");
  EXPECT_EQ(port_under_test({{"rxe0/1", "DOWN"}}, "", 0), "rxe0/1");
}

// mlx4-degraded: port 2 is DOWN/Polling, port 1 is the one tested.
TEST(Check, AnotherPortsStateIsInfoAndNeverStopsTheCheck) {
  std::vector<Finding> fs = {doc(FindingId::kPortDown, Severity::kFail, "h1", {}, "mlx4_0/2"),
                             doc(FindingId::kPortDown, Severity::kFail, "h1", {}, "mlx4_0/1")};
  scope_to_port(fs, "mlx4_0/1");
  EXPECT_EQ(fs[0].severity, Severity::kInfo);
  EXPECT_NE(fs[0].summary.find("not the port under test, mlx4_0/1"), std::string::npos);
  EXPECT_EQ(fs[1].severity, Severity::kFail);  // the port under test is judged
  EXPECT_EQ(status_of(std::vector<Finding>{fs[0]}), LayerStatus::kPass);
}

TEST(Check, ConfigurationNeverFailsALayerWhoseTrafficPassed) {
  Finding f = doc(FindingId::kFirewallBlocksRoce, Severity::kFail, "h1",
                  {"iptables -A INPUT -p udp -m udp --dport 4791 -j DROP"});
  f.summary = "the packet filter drops RoCE v2 (UDP port 4791): no data or ACK gets through";
  const Finding j = judged_by_traffic(f, "5/5 RC pings and the size ladder to h1 were answered");
  EXPECT_EQ(j.severity, Severity::kWarn);
  EXPECT_EQ(j.summary.find("no data"), std::string::npos) << j.summary;
  EXPECT_NE(j.summary.find("5/5 RC pings"), std::string::npos) << j.summary;
  EXPECT_EQ(j.evidence, f.evidence);
  // A rule matching only some packets, none of this path's: it says so too.
  Finding some = doc(FindingId::kFirewallBlocksSomeRoce, Severity::kWarn, "h1", {});
  some.summary = "the packet filter drops some RoCE v2 (UDP port 4791) packets";
  EXPECT_NE(judged_by_traffic(some, "5/5 RC pings").summary.find("it does not drop this traffic"),
            std::string::npos);
  const Finding info = doc(FindingId::kMemlockLowButPrivileged, Severity::kInfo, "h1", {});
  EXPECT_EQ(judged_by_traffic(info, "x").summary, info.summary);
}

// Two NICs, rxe0 first but the route to the peer through rxe1 (the lab's
// --device-order reversed): a finding about rxe1 is about the port the test
// used and keeps its severity; rxe0's becomes INFO. Before the fix the
// first ACTIVE port (rxe0) was judged and rxe1's failure was downgraded.
TEST(Check, LocalPortFindingsAreJudgedOnThePortTheConnectionUsed) {
  const std::vector<std::pair<std::string, std::string>> ports = {{"rxe0/1", "ACTIVE"},
                                                                  {"rxe1/1", "ACTIVE"}};
  proto::HostFacts used;
  used.device = "rxe1";
  used.port = 1;
  EXPECT_EQ(tested_port(used, ports, {}), "rxe1/1");
  EXPECT_EQ(tested_port(std::nullopt, ports, {}), "rxe0/1");  // no connection: the first ACTIVE
  conn::DeviceChoice forced;
  forced.device = "rxe1";
  EXPECT_EQ(tested_port(std::nullopt, ports, forced), "rxe1/1");
  EXPECT_TRUE(port_known_before_connection(forced));
  EXPECT_FALSE(port_known_before_connection({}));
  EXPECT_EQ(tested_port(std::nullopt, {}, {}), "");  // nothing known: nothing downgraded

  std::vector<Finding> fs = {doc(FindingId::kGidTableEmpty, Severity::kFail, "h1", {}, "rxe1/1"),
                             doc(FindingId::kPortDown, Severity::kFail, "h1", {}, "rxe0/1")};
  scope_to_port(fs, tested_port(used, ports, {}));
  EXPECT_EQ(fs[0].severity, Severity::kFail);
  EXPECT_EQ(fs[1].severity, Severity::kInfo);
  EXPECT_NE(fs[1].summary.find("not the port under test, rxe1/1"), std::string::npos);
}

// Lab, --nics 2: 'check h1 --cm --src 198.18.1.2' from h2. The verbs ping
// went through rxe0 (the route to h1 leaves from 198.18.0.2 via eth0);
// rdma_cm, bound to eth1's address, resolved rxe1 and its connection failed.
TEST(Check, RdmaCmOnAnotherDeviceThanTheVerbsPathIsNamedWithItsFix) {
  conn::PingReport verbs;
  verbs.obs.local = proto::HostFacts{};
  verbs.obs.local->device = "rxe0";
  verbs.obs.local->local_address = "198.18.0.2";
  verbs.obs.local->choice = "route to 198.18.0.1 from 198.18.0.2 via eth0 -> rxe0 port 1";
  verbs.obs.peer = proto::HostFacts{};
  verbs.obs.peer->local_address = "198.18.0.1";
  conn::PingReport cm;
  cm.options.cm = true;
  cm.options.target.host = "h1";
  cm.obs.local = proto::HostFacts{};
  cm.obs.local->device = "rxe1";
  cm.obs.local->choice = "rxe1 port 1 (rdma_cm resolved the peer's address to it from --src ...)";
  cm.obs.failed = conn::Stage::kCmConnect;
  cm.obs.error = "UNREACHABLE instead of ESTABLISHED";
  auto f = cm_device_differs(verbs, cm);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->id, FindingId::kCmDeviceDiffers);
  EXPECT_EQ(f->severity, Severity::kFail);
  EXPECT_NE(f->fix.find("--src 198.18.0.2"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("UCX_RDMA_CM_SOURCE_ADDRESS=198.18.0.2"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("reads no RDMA_CM_SOURCE_ADDRESS"), std::string::npos) << f->fix;
  // Both connected: a warning that says so, never a failure.
  cm.obs.failed = conn::Stage::kDone;
  f = cm_device_differs(verbs, cm);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->summary.find("both connected"), std::string::npos) << f->summary;
  // Same device, or rdma_cm never got a device: nothing.
  cm.obs.local->device = "rxe0";
  EXPECT_FALSE(cm_device_differs(verbs, cm).has_value());
  cm.obs.local.reset();
  EXPECT_FALSE(cm_device_differs(verbs, cm).has_value());
}

// The mlx4-degraded fixture: port 1 ACTIVE (RoCE v1 GIDs only), port 2
// DOWN/Polling. The check tests port 1; port 2's state is INFO.
TEST(Check, TheDegradedMlx4sDownSecondPortDoesNotFailTheDeviceLayer) {
  const doctor::testing::Fixture fx("mlx4-degraded");
  const auto d = doctor::run_doctor(fx.fs(), fx.src());
  auto fs = d.findings();
  const std::string under_test = port_under_test(port_states(d), "", 0);
  EXPECT_EQ(under_test, "mlx4_0/1");
  scope_to_port(fs, under_test);
  bool saw_port2 = false;
  for (const auto& f : fs) {
    if (f.id == FindingId::kPortDown) {
      saw_port2 = true;
      EXPECT_EQ(f.subject, "mlx4_0/2");
      EXPECT_EQ(f.severity, Severity::kInfo);
    }
    if (f.severity == Severity::kFail) {
      EXPECT_EQ(f.subject, "mlx4_0/1") << f.id;  // what fails is about the port under test
    }
  }
  EXPECT_TRUE(saw_port2);
  // Forcing the DOWN port makes it the port under test again.
  auto forced = d.findings();
  scope_to_port(forced, port_under_test(port_states(d), "", 2));
  for (const auto& f : forced) {
    if (f.id == FindingId::kPortDown) {
      EXPECT_EQ(f.severity, Severity::kFail);
    }
  }
}

// Lab, h1 with 'udp dport 4791 meta length 600-65535 drop': the ladder's black
// hole and h1's doctor finding about the rule are one story, the rule on top.
TEST(Check, TheRuleAndTheBlackHoleItCausesAreOneFinding) {
  Finding hole = make_finding(FindingId::kMtuBlackHole, Severity::kFail, Layer::kConnection,
                              "messages up to 512 bytes pass, 1024 bytes fail: something on the "
                              "path drops large frames");
  hole.evidence = {"1024 B: transport retry counter exceeded (12) on send (rxe0 port 1 qpn 0x11)"};
  Finding rule =
      make_finding(FindingId::kFirewallBlocksSomeRoce, Severity::kWarn, Layer::kConnection,
                   "the packet filter drops some RoCE v2 (UDP port 4791) packets");
  rule.host = "h1";
  rule.evidence = {
      "nft inet lenfilter input: udp dport 4791 meta length 600-65535 drop [matches only some "
      "packets: by meta length 600-65535]"};
  Finding other =
      make_finding(FindingId::kMemlockLowButPrivileged, Severity::kInfo, Layer::kConnection, "x");
  std::vector<Finding> fs = {hole, other, rule};
  fold_under_firewall(fs);
  ASSERT_EQ(ids(fs),
            (std::vector<std::string>{"firewall-blocks-some-roce", "memlock-low-but-privileged"}));
  EXPECT_EQ(fs[0].severity, Severity::kFail);
  EXPECT_NE(fs[0].summary.find("on h1 matches RoCE v2"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].summary.find("up to 512 bytes pass, 1024 bytes fail"), std::string::npos);
  EXPECT_EQ(fs[0].evidence.size(), 3u);  // the rule, the consequence, its evidence: each once
  // Without a failure there is nothing to fold.
  std::vector<Finding> passed = {other, rule};
  fold_under_firewall(passed);
  EXPECT_EQ(passed[1].severity, Severity::kWarn);
}

}  // namespace
}  // namespace rdmacheck::check

namespace rdmacheck::check {
namespace {

// Lab CheckLab.LossWarnsAtThePerformanceLayer (1 % loss on h2): layer 2's
// 130 probes all came back, then the 64 KiB write bandwidth test ran out of
// retries (go-back-N resends a 64-packet window; 7 misses in a row happen)
// while its counters counted sequence errors. That is the loss's cost, not a
// dead path.
TEST(Check, ATestThatRanOutOfRetriesUnderLossIsAWarn) {
  perf::PerfReport rep;
  rep.options.spec.kind = perf::Kind::kBw;
  rep.options.spec.op = perf::Op::kWrite;
  rep.ok = false;
  rep.failed = conn::Stage::kTraffic;
  rep.error = "write completion: transport retry counter exceeded";
  // Nothing measured the loss: a FAIL that says where the test stopped.
  auto f = unfinished_test_finding(rep, false);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kFail);
  // Layer 2 measured loss.
  f = unfinished_test_finding(rep, true);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->summary.find("the loss layer 2 measured"), std::string::npos) << f->summary;
  // Only the test's own counters did.
  rep.findings.push_back(make_finding(FindingId::kPacketLossDuringTest, Severity::kWarn,
                                      Layer::kPerformance, "requests were lost"));
  f = unfinished_test_finding(rep, false);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->summary.find("its own counters show"), std::string::npos) << f->summary;
  EXPECT_EQ(f->evidence.at(0), rep.error);
  // Traffic had stopped for seconds before the failure (a flap, lab
  // FabricLab.AFlapMidTestEndsInBoundedTimeAndIsNamedAsAStall): the outage,
  // before the loss it was counted as.
  rep.stalled_before_failure = perf::Stall{6.1, perf::kStallWarnS + 5.5, false};
  EXPECT_NE(unfinished_test_finding(rep, false)->summary.find("its own counters show"),
            std::string::npos)
      << "a silence perf did not call a stall (sequence gaps: loss) is the loss";
  rep.findings.insert(rep.findings.begin(),
                      make_finding(FindingId::kTrafficStalled, Severity::kWarn, Layer::kPerformance,
                                   "traffic stopped 6.1 s into"));
  f = unfinished_test_finding(rep, false);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->summary.find("traffic stopped for 8.5 s in the middle of it"), std::string::npos)
      << f->summary;
  rep.findings.erase(rep.findings.begin());
  // A setup failure is no loss, whatever was counted.
  rep.failed = conn::Stage::kHandshake;
  EXPECT_EQ(unfinished_test_finding(rep, true)->severity, Severity::kFail);
  // The test's own FAIL already says why: nothing to add.
  rep.findings.push_back(
      make_finding(FindingId::kDataValidationFailed, Severity::kFail, Layer::kPerformance, "y"));
  EXPECT_FALSE(unfinished_test_finding(rep, true));
}

// The matrix's loss-10-server (bench/DIAGNOSIS.md, run 10): 10 % loss on
// the server's egress, 27 RC round trips answered, then an 8 KiB ladder
// message ran out of its 7 retries (each try of 9 packets fails with
// probability 1 - 0.9^9 = 61 %). The probes measured the loss; the path
// carries RoCE: roce-loss, with the broken QP as its consequence, and
// layer 3 still runs.
TEST(Check, RetriesRunOutUnderMeasuredLossIsTheLossNotADeadPath) {
  conn::PingReport rc;
  rc.options.transport = proto::Transport::kRc;
  rc.obs.failed = conn::Stage::kTraffic;
  rc.obs.error = "completion status transport retry counter exceeded after the QPs reached RTS";
  rc.obs.pings_ok = 27;
  std::vector<Finding> l2 = {
      make_finding(FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection, "27 answered"),
      make_finding(FindingId::kRoceLoss, Severity::kWarn, Layer::kConnection, "1 of 28 probes"),
      make_finding(FindingId::kMemlockLowButPrivileged, Severity::kInfo, Layer::kConnection, "")};
  auto folded = l2;
  ASSERT_TRUE(fold_retry_exhaustion_into_loss(rc, folded));
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[0].id, FindingId::kRoceLoss);
  EXPECT_EQ(folded[0].severity, Severity::kWarn);
  EXPECT_NE(folded[0].evidence.back().find("consequence: after 27 answered round trips"),
            std::string::npos)
      << folded[0].evidence.back();
  // Nothing answered: no loss rate, a dead path. It stays a FAIL.
  auto dead = l2;
  rc.obs.pings_ok = 0;
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, dead));
  EXPECT_EQ(dead.size(), 3u);
  rc.obs.pings_ok = 27;
  // No loss measured by the probes: nothing to fold into.
  std::vector<Finding> unmeasured = {l2[0]};
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, unmeasured));
  // A firewall rule explains it better than a rate (firewall-by-size).
  auto ruled = l2;
  ruled.push_back(make_finding(FindingId::kFirewallBlocksSomeRoce, Severity::kWarn,
                               Layer::kConnection, "-m length"));
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, ruled));
  // Another FAIL (an MTU black hole) too.
  auto mtu = l2;
  mtu.push_back(
      make_finding(FindingId::kMtuBlackHole, Severity::kFail, Layer::kConnection, "4 KiB"));
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, mtu));
  // No loss measured, but the RC ping's port counted sequence gaps (the
  // switch-delay-jitter row): frames arrived out of order. The FAIL becomes a
  // roce-loss of its own, and layer 3 measures.
  auto reordered = unmeasured;
  rc.obs.host = "h1";
  rc.obs.seq_gaps = 12;
  rc.obs.seq_gap_counters = "hw_counters/rcvd_seq_err +12";
  ASSERT_TRUE(fold_retry_exhaustion_into_loss(rc, reordered));
  ASSERT_EQ(reordered.size(), 1u);
  EXPECT_EQ(reordered[0].id, FindingId::kRoceLoss);
  EXPECT_EQ(reordered[0].severity, Severity::kWarn);
  EXPECT_NE(reordered[0].summary.find("out of order or with gaps (hw_counters/rcvd_seq_err +12)"),
            std::string::npos)
      << reordered[0].summary;
  EXPECT_NE(reordered[0].evidence.back().find("consequence: after 27 answered round trips"),
            std::string::npos);
  // Beside another FAIL the gaps do not fold either.
  auto gaps_and_mtu = mtu;
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, gaps_and_mtu));
  rc.obs.seq_gaps = 0;
  // UD has no retries to run out of.
  auto ud = l2;
  rc.options.transport = proto::Transport::kUd;
  EXPECT_FALSE(fold_retry_exhaustion_into_loss(rc, ud));
}

// Clean TCP echoes say "RoCE alone" only when there are enough of them to
// exclude the loss the RoCE probes measured. Seen in the lab: 2 % loss in
// the switch (TCP and RoCE alike), UD 98/101, and TCP's 20 echoes all came
// back; "what is lost is RoCE" would have sent the user to the wrong place.
TEST(Check, CleanTcpEchoesBlameRoceAloneOnlyWhereThereAreEnoughOfThem) {
  conn::TcpProbeReport tcp;
  tcp.connected = true;
  tcp.tally = conn::ProbeTally{"tcp", 1000, 20, 20};
  conn::PingReport ud;
  ud.probes = {conn::ProbeTally{"ud", 64, 101, 98}};
  const auto evidence = [&](std::vector<conn::PingReport> pings, Severity sev) {
    std::vector<Finding> fs = {
        make_finding(sev == Severity::kFail ? FindingId::kFirewallBlocksRoce : FindingId::kRoceLoss,
                     sev, Layer::kConnection, "")};
    add_tcp_evidence(tcp, pings, fs);
    return fs[0].evidence.empty() ? std::string("(none)") : fs[0].evidence.back();
  };
  const std::string few = evidence({ud}, Severity::kWarn);
  EXPECT_NE(few.find("too few to tell loss on the path from loss of RoCE alone"), std::string::npos)
      << few;
  EXPECT_NE(few.find("20 echoes allow up to 16 % loss per round trip"), std::string::npos) << few;
  EXPECT_EQ(few.find("what is lost is RoCE"), std::string::npos);
  // Half the UD probes lost: 20 clean echoes exclude that.
  ud.probes = {conn::ProbeTally{"ud", 64, 100, 50}};
  EXPECT_NE(evidence({ud}, Severity::kWarn).find("what is lost is RoCE"), std::string::npos);
  // A dead RoCE path (a FAIL) beside clean TCP: RoCE alone, whatever the probe counts.
  EXPECT_NE(evidence({}, Severity::kFail).find("what is lost is RoCE"), std::string::npos);
  // The handshake (TCP itself) failed: clean echoes say nothing about RoCE.
  std::vector<Finding> hs = {
      make_finding(FindingId::kHandshakeFailed, Severity::kFail, Layer::kConnection, "")};
  add_tcp_evidence(tcp, {}, hs);
  ASSERT_EQ(hs[0].evidence.size(), 1u);
  EXPECT_EQ(hs[0].evidence[0].find("RoCE"), std::string::npos) << hs[0].evidence[0];
  EXPECT_NE(hs[0].evidence[0].find("clean now"), std::string::npos) << hs[0].evidence[0];
  // TCP lost something too: the path.
  tcp.retrans = 3;
  EXPECT_NE(evidence({ud}, Severity::kWarn).find("loses packets too"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::check

namespace rdmacheck::check {
namespace {

// The peer is asked for its doctor first: when it cannot be reached, or is
// not rdmacheck, the check says so then, in the connection layer, within the
// connection's own timeout, and runs no later layer.
CheckReport check_against(uint16_t port) {
  CheckOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = port;
  o.target.fs = FsRoot(doctor::testing::kFixtures + "/rxe-lab-h1");
  o.timeout = std::chrono::seconds(60);
  std::atomic<bool> stop{false};
  return run_check(o, stop);
}

TEST(Check, APeerThatDoesNotAnswerIsNamedInTheConnectionLayerAtOnce) {
  test_util::ClosedPort closed;
  const auto r = check_against(closed.port());
  const auto& conn = r.layers[static_cast<size_t>(Layer::kConnection)];
  EXPECT_EQ(conn.status, LayerStatus::kFail);
  ASSERT_FALSE(conn.findings.empty());
  EXPECT_EQ(conn.findings[0].id, FindingId::kServerNotListening);
  EXPECT_NE(conn.findings[0].summary.find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(r.layers[static_cast<size_t>(Layer::kPerformance)].status, LayerStatus::kNotRun);
  EXPECT_TRUE(r.pings.empty());   // no layer-2 ping waited out the same refusal
  EXPECT_LT(r.elapsed_ms, 5000);  // connect_to_server's TCP timeout
}

TEST(Check, AListenerThatIsNotRdmacheckIsNamedAsThat) {
  test_util::ForeignListener banner(test_util::ForeignListener::Manner::kBanner);
  const auto r = check_against(banner.port());
  const auto& conn = r.layers[static_cast<size_t>(Layer::kConnection)];
  ASSERT_FALSE(conn.findings.empty());
  EXPECT_EQ(conn.findings[0].id, FindingId::kNotRdmacheckServe);
  EXPECT_NE(conn.findings[0].fix.find("check -p / the port"), std::string::npos)
      << conn.findings[0].fix;
}

}  // namespace
}  // namespace rdmacheck::check
