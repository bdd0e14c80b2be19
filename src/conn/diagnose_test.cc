#include "conn/diagnose.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace rdmacheck::conn {
namespace {

proto::HostFacts facts(const std::string& gid, int netdev_mtu,
                       const std::string& type = "RoCE v2") {
  proto::HostFacts f;
  f.gid = gid;
  f.gid_type = type;
  f.netdev_mtu = netdev_mtu;
  f.active_mtu = 1024;
  return f;
}

ConnObservation lost(const std::string& peer_firewall) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kTraffic;
  o.wc_status = IBV_WC_RETRY_EXC_ERR;
  o.local = facts("0000:0000:0000:0000:0000:ffff:c612:0002", 1500);
  o.peer = facts("0000:0000:0000:0000:0000:ffff:c612:0001", 1500);
  o.peer_firewall = peer_firewall;
  o.peer_reported = true;
  return o;
}

std::vector<std::string> ids(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.emplace_back(id_name(f));
  return out;
}

// rdma_cm failures are told apart by the typed event that broke the setup.
TEST(Diagnose, ConnectionManagerEventsNameTheirCause) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kCmConnect;
  o.error = "ADDR_ERROR instead of ADDR_RESOLVED";
  o.cm_break.event = RDMA_CM_EVENT_ADDR_ERROR;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-address-error");
  const auto fix = diagnose(o).at(0).fix;
  EXPECT_NE(fix.find("UCX_RDMA_CM_SOURCE_ADDRESS"), std::string::npos) << fix;
  EXPECT_NE(fix.find("librdmacm itself reads no such variable"), std::string::npos) << fix;
  o.cm_break.event = RDMA_CM_EVENT_ROUTE_ERROR;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-route-error");
  o.cm_break.event = RDMA_CM_EVENT_REJECTED;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-rejected");
  o.cm_break.event = RDMA_CM_EVENT_CONNECT_ERROR;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-connect-failed");
  // No answer at all: the connection manager's packets are RoCE v2 too.
  o.cm_break = verbs::CmBreak{std::nullopt, true};
  const auto lost_ids = ids(diagnose(o));
  ASSERT_FALSE(lost_ids.empty());
  EXPECT_NE(lost_ids[0], "cm-connect-failed");
}

// Lab, --nics 2, h1 running 'serve -d rxe1': the client connected to
// 198.18.0.1 (eth0), the server answered with rxe1's GID 198.18.1.1, and no
// RoCE packet came back. The cause is the server's device, not the path.
TEST(Diagnose, ThePeersGidOnAnotherDeviceThanTheConnectedAddress) {
  ConnObservation o = lost("");
  o.error = "RC ping: retry exceeded";
  o.peer->device = "rxe1";
  o.peer->netdev = "eth1";
  o.peer->gid_index = 1;
  o.peer->gid = "0000:0000:0000:0000:0000:ffff:c612:0101";
  o.peer->local_address = "198.18.0.1";
  o.peer->forced = "-d rxe1";
  o.peer->choice = "forced by -d rxe1: rxe1 port 1, GID index 1 (RoCE v2) on eth1";
  const auto fs = diagnose(o);
  ASSERT_EQ(ids(fs).at(0), "peer-gid-off-address");
  EXPECT_EQ(fs[0].severity, Severity::kFail);
  EXPECT_NE(fs[0].fix.find("without -d rxe1"), std::string::npos) << fs[0].fix;
  EXPECT_NE(fs[0].fix.find("eth1"), std::string::npos) << fs[0].fix;
  // What the probes said stays as its evidence.
  bool consequence = false;
  for (const auto& e : fs[0].evidence) consequence |= e.rfind("consequence: ", 0) == 0;
  EXPECT_TRUE(consequence);
  // Not forced (the address moved to a NIC without an RDMA device): the fix says so.
  o.peer->forced.clear();
  EXPECT_NE(diagnose(o).at(0).fix.find("give 198.18.0.1 an RDMA device"), std::string::npos);
  // The GID of the connected address, or traffic that passed: nothing to blame.
  o.peer->gid = "0000:0000:0000:0000:0000:ffff:c612:0001";
  EXPECT_NE(ids(diagnose(o)).at(0), "peer-gid-off-address");
  o.peer->gid = "0000:0000:0000:0000:0000:ffff:c612:0101";
  o.failed = Stage::kDone;
  EXPECT_TRUE(diagnose(o).empty());
}

// --cm where librdmacm cannot work: no /dev/infiniband/rdma_cm (rdma_ucm
// unloaded), or a source address no RDMA device carries (an address on a
// plain netdev given with --src). Against: the peer rejecting, which says so.
TEST(Diagnose, RdmaCmResolutionFailuresNameTheHostCause) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kLocalSetup;
  o.error = "rdma_create_event_channel: No such device";
  o.cm = CmHost{.used = true, .dev_node = false, .ucm_loaded = false, .source = "198.18.0.2"};
  auto fs = diagnose(o);
  ASSERT_EQ(ids(fs).at(0), "rdma-cm-unavailable");
  EXPECT_NE(fs[0].fix.find("modprobe rdma_ucm"), std::string::npos) << fs[0].fix;
  EXPECT_NE(fs[0].evidence.at(0).find("rdma_ucm: not loaded"), std::string::npos);
  // The modules are there; the source address lives on a netdev without a device.
  o.failed = Stage::kCmConnect;
  o.error = "rdma_resolve_addr: No such device [198.18.0.1]";
  o.cm = CmHost{.used = true, .source = "10.99.0.2", .source_rdma = false};
  fs = diagnose(o);
  ASSERT_EQ(ids(fs).at(0), "cm-source-without-device");
  EXPECT_NE(fs[0].summary.find("10.99.0.2"), std::string::npos);
  EXPECT_NE(fs[0].fix.find("--src"), std::string::npos);
  EXPECT_NE(fs[0].fix.find("UCX_RDMA_CM_SOURCE_ADDRESS"), std::string::npos);
  // Everything in place and the peer said no: the rejection, not the host.
  o.cm.source_rdma = true;
  o.cm_break.event = RDMA_CM_EVENT_REJECTED;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-rejected");
  // Without --cm nothing of this applies.
  o.cm = CmHost{};
  o.cm.dev_node = false;
  EXPECT_EQ(ids(diagnose(o)).at(0), "cm-rejected");
}

TEST(Diagnose, HealthyHasNoFindings) { EXPECT_TRUE(diagnose(ConnObservation{}).empty()); }

// Refused: nothing listens there, or serve --bind listens on another
// address of the host; the client cannot tell them apart, the fix names both.
TEST(Diagnose, RefusedMeansNoServer) {
  ConnObservation o;
  o.host = "h1";
  o.tcp_port = 4792;
  o.failed = Stage::kTcpConnect;
  o.errnum = ECONNREFUSED;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"server-not-listening"});
  EXPECT_EQ(f[0].severity, Severity::kFail);
  EXPECT_NE(f[0].fix.find("start 'rdmacheck serve' on h1"), std::string::npos) << f[0].fix;
  EXPECT_NE(f[0].fix.find("--bind ADDR, connect to that ADDR"), std::string::npos) << f[0].fix;
  EXPECT_NE(f[0].fix.find("sport = :4792"), std::string::npos) << f[0].fix;
}

TEST(Diagnose, TimeoutMeansUnreachable) {
  ConnObservation o;
  o.failed = Stage::kTcpConnect;
  o.errnum = ETIMEDOUT;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"peer-unreachable"});
  o.errnum = EHOSTUNREACH;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"peer-unreachable"});
}

TEST(Diagnose, FirewallOnThePeerComesFirstWithTheRule) {
  const auto f = diagnose(lost("-A INPUT -p udp -m udp --dport 4791 -j DROP"));
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, FindingId::kFirewallBlocksRoce);
  EXPECT_NE(f[0].evidence[0].find("--dport 4791 -j DROP"), std::string::npos);
}

TEST(Diagnose, LocalFirewallCountsToo) {
  auto o = lost("");
  o.local_firewall = {"iptables -A OUTPUT -p udp -j DROP"};
  EXPECT_EQ(diagnose(o)[0].id, FindingId::kFirewallBlocksRoce);
}

TEST(Diagnose, UnexplainedLossIsNamedAsSuch) {
  const auto f = diagnose(lost(""));
  EXPECT_EQ(ids(f), std::vector<std::string>{"roce-packets-lost"});
  EXPECT_EQ(f[0].evidence.back(), "no rule dropping UDP 4791 found on this host or the peer");
}

// Without the server's bye its firewall was never read: the evidence may not
// clear it (seen in the lab when the bye missed the command's deadline).
TEST(Diagnose, APeerFirewallNeverReadIsNotCleared) {
  auto o = lost("");
  o.peer_reported = false;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"roce-packets-lost"});
  EXPECT_EQ(f[0].evidence.back(),
            "no rule dropping UDP 4791 found on this host; the peer's firewall is unknown (its "
            "report did not come back)");
}

TEST(Diagnose, GidTypeMismatch) {
  auto o = lost("");
  o.peer->gid_type = "RoCE v1";
  EXPECT_EQ(diagnose(o)[0].id, FindingId::kGidTypeMismatch);
}

TEST(Diagnose, LadderFindsTheBlackHole) {
  auto o = lost("");
  o.local->netdev_mtu = 9000;
  o.ladder = {{64, true, 10, ""}, {1024, true, 10, ""}, {2048, false, 0, "retry exceeded"}};
  const auto f = diagnose(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, FindingId::kMtuBlackHole);
  EXPECT_NE(f[0].summary.find("up to 1024 bytes pass, 2048 bytes fail"), std::string::npos);
  EXPECT_NE(f[0].evidence[0].find("9000"), std::string::npos);
}

// The matrix's switch-delay-jitter (bench/DIAGNOSIS.md, run 11): +-5 ms of
// jitter on both directions reordered the 8-packet 8 KiB ladder message until
// its retries ran out, while 2 KiB passed. The responder's NAKs for packets
// out of sequence (rxe's rcvd_seq_err on the requester) say the frames of
// that size arrived: no size limit, so no black hole.
TEST(Diagnose, SequenceGapsRuleTheBlackHoleOut) {
  auto o = lost("");
  o.ladder = {{64, true, 10, ""}, {2048, true, 10, ""}, {8192, false, 0, "retry exceeded"}};
  o.seq_gaps = 12;
  o.seq_gap_counters = "hw_counters/rcvd_seq_err +12";
  const auto f = diagnose(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(ids(f), std::vector<std::string>{"roce-packets-lost"});
  EXPECT_NE(f[0].summary.find("lost or reordered"), std::string::npos) << f[0].summary;
  ASSERT_GE(f[0].evidence.size(), 2u);
  const std::string& gaps = f[0].evidence[1];  // after the completion status
  EXPECT_NE(gaps.find("hw_counters/rcvd_seq_err +12"), std::string::npos) << gaps;
  EXPECT_NE(gaps.find("8192 B message did reach it (not a size limit)"), std::string::npos) << gaps;
  // The same ladder without a gap counted is the black hole.
  o.seq_gaps = 0;
  o.seq_gap_counters.clear();
  EXPECT_EQ(diagnose(o)[0].id, FindingId::kMtuBlackHole);
}

TEST(Diagnose, RnrAndAccessErrors) {
  ConnObservation o;
  o.failed = Stage::kTraffic;
  o.wc_status = IBV_WC_RNR_RETRY_EXC_ERR;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"receiver-not-ready"});
  o.wc_status = IBV_WC_REM_ACCESS_ERR;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"remote-access-error"});
}

// Whatever call pinned first (the MR, or a CQ ring on mlx5), ENOMEM under a
// finite locked-memory limit is that limit; under an unlimited one it is not.
TEST(Diagnose, MemlockWhenPinningFailsUnderAFiniteLimit) {
  ConnObservation o;
  o.failed = Stage::kLocalSetup;
  o.errnum = ENOMEM;
  o.error = "ibv_reg_mr: Cannot allocate memory [rxe0 131072 bytes]";
  o.memlock_limit = 65536;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"memlock-too-low"});
  EXPECT_EQ(f[0].evidence[1], "RLIMIT_MEMLOCK of this process: 65536 bytes (ulimit -l 64)");
  o.error = "ibv_create_cq: Cannot allocate memory [mlx5_0 cqe 256]";
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"memlock-too-low"});
  o.memlock_limit.reset();  // unlimited: out of memory is something else
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"local-setup-failed"});
  o.memlock_limit = 65536;
  o.errnum = EINVAL;  // a refused attribute is not the limit
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"local-setup-failed"});
}

// A length-matching rule and the black hole it makes are one story, the rule on top.
TEST(Diagnose, ALengthRuleAndItsBlackHoleAreOneFinding) {
  auto o = lost(
      "nft inet filter input: udp dport 4791 meta length 1100-65535 drop [matches only some "
      "packets: by meta length 1100-65535]");
  o.pings_ok = 5;
  o.pings_sent = 5;
  o.ladder = {{64, true, 10, ""}, {1024, true, 10, ""}, {2048, false, 0, "retry exceeded"}};
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"firewall-blocks-some-roce"});
  EXPECT_NE(f[0].summary.find("up to 1024 bytes pass, 2048 bytes fail"), std::string::npos);
  EXPECT_NE(f[0].evidence[0].find("on h1: nft inet filter input"), std::string::npos);
  EXPECT_EQ(f[0].evidence[1], "2048 B: retry exceeded");
}

// A session with h1 that failed at the handshake with ERROR.
ConnObservation at_handshake(std::string error) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kHandshake;
  o.error = std::move(error);
  return o;
}

// The server answered the hello with its own error (rxe's RTR refusing a GID).
ConnObservation refused_by_server() {
  ConnObservation o = at_handshake("server setup failed: ibv_modify_qp(RTR): Invalid argument");
  o.server_refused = true;
  o.refusal_code = proto::kRefusedQpSetup;
  return o;
}

// The server's own refusal is not a version problem.
TEST(Diagnose, AServerThatRefusesSaysWhy) {
  const ConnObservation o = refused_by_server();
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"server-refused"});
  EXPECT_EQ(f[0].summary, "h1 refused the test: " + o.error);
  EXPECT_EQ(f[0].fix.find("same rdmacheck version"), std::string::npos);
}

Selection rxe_gid(int index, const std::string& gid) {
  return Selection{.device = "rxe0",
                   .port = 1,
                   .port_state = PortState::kActive,
                   .gid_index = index,
                   .gid = gid,
                   .gid_type = GidType::kRoceV2,
                   .netdev = "eth0"};
}

// The lab's rxe: GID 0 link-local IPv6, GID 1 the IPv4-mapped address; -x 0.
ConnObservation forced_link_local() {
  ConnObservation o = refused_by_server();
  o.user.gid = true;
  o.user.local_address = "198.18.0.2";
  o.user.forced = rxe_gid(0, "fe80:0000:0000:0000:5054:00ff:fe12:3402");
  o.user.automatic = rxe_gid(1, "0000:0000:0000:0000:0000:ffff:c612:0002");
  return o;
}

TEST(Diagnose, AForcedLinkLocalGidIsTheTopFindingWithTheValueThatWorks) {
  const auto f = diagnose(forced_link_local());
  ASSERT_EQ(ids(f), std::vector<std::string>{"forced-gid-unusable"});
  EXPECT_EQ(f[0].severity, Severity::kFail);
  EXPECT_NE(f[0].summary.find("-x 0 selected rxe0 port 1 GID 0 (fe80:"), std::string::npos)
      << f[0].summary;
  EXPECT_NE(f[0].summary.find("link-local IPv6 GID"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].summary.find("without it rdmacheck uses rxe0 port 1 GID 1"), std::string::npos)
      << f[0].summary;
  EXPECT_EQ(f[0].fix, "drop -x 0 and let rdmacheck choose, or give -x 1");
  // The refusal it caused is folded under it, not a second finding.
  EXPECT_NE(f[0].evidence.back().find("consequence: fail server-refused"), std::string::npos);
}

TEST(Diagnose, AForcedGidThatWorkedIsNotBlamed) {
  auto o = forced_link_local();
  o.failed = Stage::kDone;
  EXPECT_TRUE(diagnose(o).empty());
  o = forced_link_local();
  o.failed = Stage::kTcpConnect;  // no GID makes a TCP connection fail
  o.errnum = ECONNREFUSED;
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"server-not-listening"});
  o = forced_link_local();
  o.user.forced = o.user.automatic;  // -x 1: what rdmacheck picks anyway
  EXPECT_EQ(ids(diagnose(o)), std::vector<std::string>{"server-refused"});
}

TEST(Diagnose, WhySelectionFailsNamesFamilyTypeNetdevAndPortState) {
  UserSelection u;
  u.gid = true;
  u.local_address = "198.18.0.2";
  u.automatic = rxe_gid(1, "0000:0000:0000:0000:0000:ffff:c612:0002");
  u.forced = rxe_gid(2, "2001:0db8:0000:0000:0000:0000:0000:0002");
  EXPECT_NE(why_selection_fails(u, std::nullopt, "").find("it is an IPv6 GID"), std::string::npos);
  u.forced->gid_type = GidType::kRoceV1;
  EXPECT_NE(why_selection_fails(u, std::nullopt, "").find("not routable"), std::string::npos);
  u.forced = rxe_gid(3, "0000:0000:0000:0000:0000:ffff:0a00:0002");
  u.forced->netdev = "eth1";
  EXPECT_EQ(why_selection_fails(u, std::nullopt, ""),
            "it belongs to eth1, but this host reaches the peer from 198.18.0.2 through eth0");
  u = UserSelection{};
  u.port = true;
  u.automatic = rxe_gid(1, "x");
  u.forced = rxe_gid(1, "x");
  u.forced->port = 2;
  u.forced->port_state = PortState::kDown;
  EXPECT_EQ(why_selection_fails(u, std::nullopt, ""),
            "port 2 is DOWN: nothing is sent or received on it");
  u.forced.reset();
  EXPECT_EQ(why_selection_fails(u, std::nullopt, "rxe0 port 2 GID index 1 is empty"),
            "it could not be used: rxe0 port 2 GID index 1 is empty");
}

TEST(Diagnose, LossAfterAnsweredPingsDoesNotSayNothingGotThrough) {
  auto o = lost("");
  o.pings_ok = 3;
  o.pings_sent = 4;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"roce-packets-lost"});
  EXPECT_EQ(f[0].summary.find("no RDMA packet"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].summary.find("3 RDMA round trips were answered"), std::string::npos);
  // Answered round trips rule out a blocked port and a wrong GID: the fix is
  // the loss's, not the firewall and GID checklist of a path that never answered.
  EXPECT_EQ(f[0].fix.rfind("find where packets are dropped", 0), 0u) << f[0].fix;
  EXPECT_EQ(diagnose(lost(""))[0].fix.rfind("check for firewalls or ACLs on UDP 4791", 0), 0u);
}

TEST(Diagnose, AForcedDownPortNamesTheFlagAndThePortThatWorks) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kTraffic;
  o.wc_status = IBV_WC_RETRY_EXC_ERR;
  o.user.port = true;
  o.user.local_address = "192.168.1.2";
  o.user.automatic = rxe_gid(1, "0000:0000:0000:0000:0000:ffff:c0a8:0102");
  o.user.automatic->device = "mlx4_0";
  o.user.forced = o.user.automatic;
  o.user.forced->port = 2;
  o.user.forced->port_state = PortState::kDown;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"forced-port-unusable"});
  EXPECT_NE(f[0].summary.find("--ib-port 2 selected mlx4_0 port 2"), std::string::npos)
      << f[0].summary;
  EXPECT_NE(f[0].summary.find("port 2 is DOWN"), std::string::npos) << f[0].summary;
  EXPECT_EQ(f[0].fix, "drop --ib-port 2 and let rdmacheck choose, or give --ib-port 1");
  EXPECT_NE(f[0].evidence.back().find("consequence: fail roce-packets-lost"), std::string::npos);
}

// A client the server would not let in gets one finding, named for why.
TEST(Diagnose, EveryAuthFailureIsOneAuthFindingWithEvidenceAndFix) {
  for (const auto& [kind, name] : EnumNames<proto::AuthFailure>::table) {
    if (kind == proto::AuthFailure::kNone) continue;
    ConnObservation o;
    o.host = "h1";
    o.failed = Stage::kAuth;
    o.auth = kind;
    o.error = "auth: what the server said";
    const auto fs = diagnose(o);
    ASSERT_EQ(fs.size(), 1u) << name;
    EXPECT_EQ(id_name(fs[0]), name);
    // A listener that is not rdmacheck is no authentication failure.
    const bool foreign =
        kind == proto::AuthFailure::kForeign || kind == proto::AuthFailure::kSilent;
    EXPECT_EQ(id_name(fs[0]).rfind("auth-", 0) == 0, !foreign) << name;
    EXPECT_EQ(fs[0].severity, Severity::kFail);
    EXPECT_EQ(fs[0].evidence, std::vector<std::string>{"auth: what the server said"});
    EXPECT_FALSE(fs[0].fix.empty()) << name;
    // The table's texts name {host} and {port}: every one filled in.
    EXPECT_EQ(fs[0].summary.find_first_of("{}"), std::string::npos) << fs[0].summary;
    EXPECT_EQ(fs[0].fix.find_first_of("{}"), std::string::npos) << fs[0].fix;
  }
}

}  // namespace
}  // namespace rdmacheck::conn

namespace rdmacheck::conn {
namespace {

// Lab scenario firewall-by-source: h1 drops UDP 4791 from 198.18.0.2, the
// client under test. For this path that is every RoCE packet, so the rule is
// the whole story; the same rule naming another host (198.18.0.99) is not.
TEST(Diagnose, AnAddressRuleNamingThisPathBlocksAllOfIt) {
  auto o = lost(
      "iptables -A INPUT -s 198.18.0.2/32 -p udp -m udp --dport 4791 -j DROP "
      "[matches only some packets: by source 198.18.0.2/32]");
  auto f = diagnose(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, FindingId::kFirewallBlocksRoce);
  EXPECT_NE(f[0].evidence[0].find("this path's address is in it"), std::string::npos);

  o = lost(
      "iptables -A INPUT -s 198.18.0.99/32 -p udp -m udp --dport 4791 -j DROP "
      "[matches only some packets: by source 198.18.0.99/32]");
  f = diagnose(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].id, FindingId::kFirewallBlocksSomeRoce);
  // An address and a length: only the large packets of this path.
  o = lost(
      "iptables -A INPUT -s 198.18.0.0/24 -p udp -m udp --dport 4791 -m length --length "
      "600:65535 -j DROP [matches only some packets: by source 198.18.0.0/24 and by "
      "--length 600:65535]");
  EXPECT_EQ(ids(diagnose(o)).at(0), "firewall-blocks-some-roce");
}

}  // namespace
}  // namespace rdmacheck::conn

namespace rdmacheck::conn {
namespace {

// Seen in the diagnosis matrix (switch-flap-mid-test, 2026-12-07): the link
// went down during the handshake, the server's 5 s handshake deadline
// passed ("no valid handshake: recv: Connection timed out" in its log) and
// it closed; the client read a reset. A version mismatch is one cause left
// standing, not the only one: the fix names both and how to tell them apart.
TEST(Diagnose, AConnectionEndedMidHandshakeNamesBothCausesNotJustTheVersion) {
  ConnObservation o =
      at_handshake("recv: Connection reset by peer [the peer closed the connection]");
  o.errnum = ECONNRESET;
  const auto f = diagnose(o);
  ASSERT_EQ(ids(f), std::vector<std::string>{"handshake-failed"});
  EXPECT_NE(f[0].summary.find("ended during the handshake"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].fix.find("'no valid handshake: ... timed out'"), std::string::npos) << f[0].fix;
  EXPECT_NE(f[0].fix.find("link flap"), std::string::npos) << f[0].fix;
  EXPECT_NE(f[0].fix.find("run the same version on both hosts"), std::string::npos) << f[0].fix;
  EXPECT_EQ(f[0].evidence[0], o.error);
  // A message the client could not parse: the version is the cause left.
  o.errnum = 0;
  o.error = "handshake: the server's welcome has no field 'version'";
  EXPECT_EQ(diagnose(o)[0].fix,
            "run the same rdmacheck version on both hosts; check the server's log");
}

// A server without RDMA refuses the test with doctor's finding id as the
// refusal's code: the client names the server's missing device, not the path.
TEST(Diagnose, AServerWithoutRdmaIsDoctorsFindingAboutTheServer) {
  ConnObservation o = at_handshake("peer: this server has no usable RDMA device: ...");
  o.server_refused = true;
  o.refusal_code = "no-rdma-device";
  const auto fs = diagnose(o);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, FindingId::kNoRdmaDevice);
  EXPECT_EQ(fs[0].layer, Layer::kDevice);
  EXPECT_NE(fs[0].summary.find("h1 (the server)"), std::string::npos) << fs[0].summary;
  EXPECT_NE(fs[0].fix.find("rdmacheck doctor' on h1"), std::string::npos) << fs[0].fix;
}

// This host without RDMA: doctor's finding, with the call that failed first.
TEST(Diagnose, LocalSetupOnAHostWithoutRdmaIsDoctorsFinding) {
  ConnObservation o;
  o.host = "h1";
  o.failed = Stage::kLocalSetup;
  o.error = "ibv_get_device_list: Function not implemented";
  Finding doctors =
      make_finding(FindingId::kNoRdmaDevice, Severity::kFail, Layer::kDevice, "no device");
  doctors.fix = "boot a kernel with RDMA support";
  o.no_rdma = doctors;
  const auto fs = diagnose(o);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, FindingId::kNoRdmaDevice);
  EXPECT_EQ(fs[0].fix, doctors.fix);
  EXPECT_EQ(fs[0].evidence.at(0), o.error);
}

}  // namespace
}  // namespace rdmacheck::conn
