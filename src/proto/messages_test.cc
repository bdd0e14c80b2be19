#include "proto/messages.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace rdmacheck::proto {
namespace {

Hello sample_hello() {
  Hello h;
  h.test.max_size = 8192;
  h.facts.hostname = "h2";
  h.facts.version = "0.1.0";
  h.facts.device = "rxe0";
  h.facts.gid = "0000:0000:0000:0000:0000:ffff:c612:0002";
  h.facts.gid_type = "RoCE v2";
  h.facts.active_mtu = 1024;
  h.facts.netdev_mtu = 1500;
  h.facts.netdev = "eth0";
  h.qp.qpn = 0x11;
  h.qp.psn = 0xabcdef;
  h.qp.gid = h.facts.gid;
  return h;
}

TEST(Messages, HelloRoundTrips) {
  auto parsed = parse_hello(to_json(sample_hello()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->qp.qpn, 0x11u);
  EXPECT_EQ(parsed->qp.psn, 0xabcdefu);
  EXPECT_EQ(parsed->facts.active_mtu, 1024);
  EXPECT_EQ(parsed->test.transport, Transport::kRc);
}

// The client's budget for its test (serve ends the session by it): sent
// when said, read back; absent when unsaid (as from an older client).
TEST(Messages, TheHellosBudgetRoundTripsAndIsOptional) {
  Hello h = sample_hello();
  h.test.budget_ms = 8500;
  auto back = parse_hello(to_json(h));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->test.budget_ms, 8500u);
  h.test.budget_ms = 0;
  auto j = to_json(h);
  EXPECT_FALSE(j["test"].contains("budget_ms")) << j.dump();
  back = parse_hello(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->test.budget_ms, 0u);
  j["test"]["budget_ms"] = 0;  // said, but nothing: not a budget
  EXPECT_FALSE(parse_hello(j).ok());
}

// A monitor's probe: asked in the hello, taken in the welcome, both
// optional on the wire (an older peer neither sends nor reads them), and
// only a small ping may be one.
TEST(Messages, AProbeIsASmallPingAndBothSidesSayIt) {
  Hello h = sample_hello();
  auto j = to_json(h);
  EXPECT_FALSE(j["test"].contains("probe")) << j.dump();
  EXPECT_FALSE(asks_probe(j));
  h.test.probe = true;
  h.test.max_size = kMaxProbeSize;
  j = to_json(h);
  EXPECT_TRUE(asks_probe(j));
  auto back = parse_hello(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->test.probe);
  j["test"]["max_size"] = kMaxProbeSize + 1;
  back = parse_hello(j);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message().find("a probe is a ping of at most 4096 bytes"),
            std::string::npos)
      << back.error().message();
  j["test"]["max_size"] = 64;
  j["test"]["probe"] = "yes";
  EXPECT_FALSE(asks_probe(j));
  EXPECT_FALSE(parse_hello(j).ok());
  EXPECT_FALSE(asks_probe(nlohmann::json::array()));
  EXPECT_FALSE(asks_probe(error_message("no")));

  Welcome w;
  w.facts = h.facts;
  w.qp = h.qp;
  EXPECT_FALSE(to_json(w).contains("probe"));
  w.probe = true;
  auto wb = parse_welcome(to_json(w));
  ASSERT_TRUE(wb.ok()) << wb.error().message();
  EXPECT_TRUE(wb->probe);
}

TEST(Messages, RejectsOutOfRangeFields) {
  auto j = to_json(sample_hello());
  j["qp"]["psn"] = 0x1000000;  // 25 bits
  auto r = parse_hello(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("qp.psn"), std::string::npos);

  j = to_json(sample_hello());
  j["test"]["max_size"] = kMaxMessageSize + 1;
  EXPECT_FALSE(parse_hello(j).ok());

  j = to_json(sample_hello());
  j["facts"]["active_mtu_bytes"] = -5;
  EXPECT_FALSE(parse_hello(j).ok());

  j = to_json(sample_hello());
  j["qp"]["gid"] = "::ffff:1.2.3.4";
  EXPECT_FALSE(parse_hello(j).ok());

  j = to_json(sample_hello());
  j["test"]["transport"] = "xrc";
  EXPECT_FALSE(parse_hello(j).ok());

  j = to_json(sample_hello());
  j["facts"]["hostname"] = std::string(1000, 'a');
  EXPECT_FALSE(parse_hello(j).ok());

  j = to_json(sample_hello());
  j["facts"].erase("device");
  EXPECT_FALSE(parse_hello(j).ok());
}

TEST(Messages, PathMtuAndAckTimeoutTravelOnlyWhenAsked) {
  // Not asked: the keys stay out, so a server from before -m/-u reads the hello.
  const auto plain = to_json(sample_hello());
  EXPECT_FALSE(plain["test"].contains("path_mtu_bytes"));
  EXPECT_FALSE(plain["test"].contains("ack_timeout"));
  Hello h = sample_hello();
  h.test.path_mtu = 512;
  h.test.ack_timeout = 18;
  h.facts.path_mtu = 512;
  auto parsed = parse_hello(to_json(h));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->test.path_mtu, 512);
  EXPECT_EQ(parsed->test.ack_timeout, 18);
  EXPECT_EQ(parsed->facts.path_mtu, 512);
  // A peer's path MTU below the smallest MTU, and an infinite (0) or too
  // large ACK timeout, are refused.
  for (const auto& [key, value] : {std::pair<const char*, int>{"path_mtu_bytes", 128},
                                   {"path_mtu_bytes", 8192},
                                   {"ack_timeout", 0},
                                   {"ack_timeout", 32}}) {
    auto j = to_json(h);
    j["test"][key] = value;
    EXPECT_FALSE(parse_hello(j).ok()) << key << " " << value;
  }
}

TEST(Messages, VersionMismatchIsNamed) {
  auto j = to_json(sample_hello());
  j["version"] = kVersion + 1;
  auto r = parse_hello(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("same rdmacheck version"), std::string::npos);
}

TEST(Messages, UdCarriesOnlySend) {
  auto h = sample_hello();
  h.test.transport = Transport::kUd;
  h.test.op = Op::kWrite;
  EXPECT_FALSE(parse_hello(to_json(h)).ok());
}

TEST(Messages, PeerErrorsSurface) {
  auto r = parse_welcome(error_message("server busy: too many sessions"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "peer: server busy: too many sessions");
  EXPECT_FALSE(parse_welcome(nlohmann::json::array()).ok());
  EXPECT_FALSE(parse_done(nlohmann::json{{"type", "bye"}}).ok());
}

TEST(Messages, GidText) {
  EXPECT_TRUE(valid_gid_text("fe80:0000:0000:0000:5054:00ff:fe12:3401"));
  EXPECT_FALSE(valid_gid_text("fe80:0000:0000:0000:5054:00ff:fe12:340"));
  EXPECT_FALSE(valid_gid_text("fe80:0000:0000:0000:5054:00ff:fe12:34g1"));
  EXPECT_FALSE(valid_gid_text("fe80-0000:0000:0000:5054:00ff:fe12:3401"));
}

TEST(Messages, ByeRoundTrips) {
  Bye b;
  b.received = 3;
  b.replied = 3;
  b.wc_errors = {"transport retry counter exceeded (12)"};
  b.firewall = "-A INPUT -p udp -m udp --dport 4791 -j DROP";
  b.timeline = {{"INIT", 10, true, ""}, {"ERROR", 0, false, "x"}};
  auto r = parse_bye(to_json(b));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->firewall, b.firewall);
  ASSERT_EQ(r->timeline.size(), 2u);
  EXPECT_FALSE(r->timeline[1].ok);
  EXPECT_TRUE(r->cm_refused.empty());
  EXPECT_FALSE(to_json(b).contains("cm_refused")) << "sent only when there is a refusal";
  b.cm_refused = "the rdma_cm connect request came from 198.18.0.2, not from ...";
  r = parse_bye(to_json(b));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->cm_refused, b.cm_refused);
}

TEST(Messages, PerfTestsCarryTheirParamsStrictly) {
  Hello h = sample_hello();
  h.test.kind = TestKind::kBw;
  h.test.op = Op::kAtomicFadd;
  h.test.perf = PerfParams{{8}, 1000, 0};
  auto parsed = parse_hello(to_json(h));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  ASSERT_TRUE(parsed->test.perf);
  EXPECT_EQ(parsed->test.perf->sizes, std::vector<uint32_t>{8});
  EXPECT_EQ(parsed->test.perf->iterations, 1000u);

  auto j = to_json(h);
  j["test"].erase("perf");  // bw without its params
  EXPECT_FALSE(parse_hello(j).ok());
  j = to_json(h);
  j["test"]["perf"]["sizes"] = {8, 9000};  // beyond max_size
  EXPECT_FALSE(parse_hello(j).ok());
  j = to_json(h);
  j["test"]["perf"]["duration_ms"] = 2000;  // both bounds
  EXPECT_FALSE(parse_hello(j).ok());
  j = to_json(h);
  j["test"]["transport"] = "uc";  // UC has no atomics
  EXPECT_FALSE(parse_hello(j).ok());
  j["test"]["op"] = "write";
  EXPECT_TRUE(parse_hello(j).ok());
  j = to_json(h);
  j["test"]["kind"] = "ping";  // ping knows no atomics, and carries no perf
  EXPECT_FALSE(parse_hello(j).ok());
  Hello ping = sample_hello();
  j = to_json(ping);
  j["test"]["perf"] = to_json(h)["test"]["perf"];
  EXPECT_FALSE(parse_hello(j).ok());
}

TEST(Messages, BarriersReadyAndTheServersDirection) {
  Sync s;
  s.step = 3;
  s.phase = SyncPhase::kCheck;
  s.ops = 500;
  s.errors = {"data the client sent (4096 B): byte 0 of 4096 is 0x00, expected 0x5c"};
  auto p = parse_sync(to_json(s));
  ASSERT_TRUE(p.ok()) << p.error().message();
  EXPECT_EQ(p->step, 3u);
  EXPECT_EQ(p->phase, SyncPhase::kCheck);
  EXPECT_EQ(p->ops, 500u);
  EXPECT_EQ(p->errors, s.errors);
  auto j = to_json(s);
  j["phase"] = "later";
  EXPECT_FALSE(parse_sync(j).ok());
  j = to_json(s);
  j["step"] = 100000;  // more steps than sizes a test may have
  EXPECT_FALSE(parse_sync(j).ok());
  EXPECT_FALSE(parse_sync(to_json(Done{})).ok());  // a done is not a sync

  Ready r{sample_hello().qp};
  r.qp.rkey = 0x1234;
  auto pr = parse_ready(to_json(r));
  ASSERT_TRUE(pr.ok()) << pr.error().message();
  EXPECT_EQ(pr->qp.rkey, 0x1234u);

  Bye b;
  b.bw = {{4096, 300, 0.25}};
  b.cpu_s = 0.5;
  b.wall_s = 2;
  auto pb = parse_bye(to_json(b));
  ASSERT_TRUE(pb.ok()) << pb.error().message();
  ASSERT_EQ(pb->bw.size(), 1u);
  EXPECT_EQ(pb->bw[0].msgs, 300u);
  EXPECT_EQ(pb->cpu_s, 0.5);
  EXPECT_EQ(pb->wall_s, 2);
  auto jb = to_json(b);
  jb["bw"][0]["size"] = 0;
  EXPECT_FALSE(parse_bye(jb).ok());

  Hello h = sample_hello();
  h.test.kind = TestKind::kBw;
  h.test.op = Op::kSend;
  h.test.perf = PerfParams{{4096}, 100, 0};
  h.test.perf->bidir = true;
  h.test.perf->validate = true;
  h.test.perf->seed = 77;
  h.test.perf->tx_depth = 16;
  auto ph = parse_hello(to_json(h));
  ASSERT_TRUE(ph.ok()) << ph.error().message();
  EXPECT_TRUE(ph->test.perf->bidir);
  EXPECT_TRUE(ph->test.perf->validate);
  EXPECT_EQ(ph->test.perf->seed, 77u);
  EXPECT_EQ(ph->test.perf->tx_depth, 16u);
  auto jh = to_json(h);
  jh["test"]["perf"]["bidir"] = "yes";
  EXPECT_FALSE(parse_hello(jh).ok());
}

TEST(Messages, ByeCountersAreNamedCounts) {
  Bye b;
  b.counters = {{"hw_counters/out_of_seq_request", 7}};
  auto parsed = parse_bye(to_json(b));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->counters, b.counters);
  auto j = to_json(b);
  j["counters"]["hw_counters/x"] = -1;
  EXPECT_FALSE(parse_bye(j).ok());
  j = to_json(b);
  j["counters"]["../../etc"] = 1;
  EXPECT_FALSE(parse_bye(j).ok());
}

}  // namespace
}  // namespace rdmacheck::proto

namespace rdmacheck::proto {
namespace {

TEST(Messages, DoctorReportIsValidatedFindingByFinding) {
  Finding f{FindingId::kFirewallBlocksRoce, Severity::kFail, Layer::kConnection, "drops UDP 4791"};
  f.evidence = {"-A INPUT -p udp -m udp --dport 4791 -j DROP"};
  auto r = parse_doctor_report(doctor_report("h1", rdmacheck::to_json(std::vector<Finding>{f})));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->hostname, "h1");
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].severity, Severity::kFail);
  EXPECT_EQ(r->findings[0].layer, Layer::kConnection);

  auto bad = doctor_report("h1", rdmacheck::to_json(std::vector<Finding>{f}));
  bad["findings"][0]["id"] = "Not Kebab";
  EXPECT_FALSE(parse_doctor_report(bad).ok());
  bad = doctor_report("h1", rdmacheck::to_json(std::vector<Finding>{f}));
  bad["findings"][0]["severity"] = "catastrophic";
  EXPECT_FALSE(parse_doctor_report(bad).ok());
  bad = doctor_report("h1", rdmacheck::to_json(std::vector<Finding>{f}));
  bad["findings"][0]["evidence"] = nlohmann::json::array({std::string(5000, 'x')});
  EXPECT_FALSE(parse_doctor_report(bad).ok());
  EXPECT_FALSE(parse_doctor_report(error_message("busy")).ok());
}

// A newer peer may send an id this build does not know: it is carried as it
// came (and printed and written back the same), never dropped or renamed.
TEST(Messages, DoctorReportCarriesAnIdThisBuildDoesNotKnow) {
  Finding f{FindingId::kFirewallBlocksRoce, Severity::kWarn, Layer::kDevice, "from the future"};
  auto doc = doctor_report("h1", rdmacheck::to_json(std::vector<Finding>{f}));
  doc["findings"][0]["id"] = "nic-on-fire";
  auto r = parse_doctor_report(doc);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->findings.size(), 1u);
  const Finding& got = r->findings[0];
  EXPECT_EQ(got.id, FindingId::kForeign);
  EXPECT_EQ(id_name(got), "nic-on-fire");
  EXPECT_EQ(rdmacheck::to_json(got)["id"], "nic-on-fire");
  EXPECT_EQ(got.severity, Severity::kWarn);
  // A known name comes back typed.
  doc["findings"][0]["id"] = "mtu-black-hole";
  r = parse_doctor_report(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->findings[0].is(FindingId::kMtuBlackHole));
}

}  // namespace
}  // namespace rdmacheck::proto

namespace rdmacheck::proto {
namespace {

// The fuzz target's seeds are real messages: each one must pass its own
// parser, or the fuzzer never gets past the first checks.
TEST(FuzzCorpus, EverySeedIsAcceptedByItsParser) {
  const std::string dir = std::string(RDMACHECK_FUZZ_CORPUS) + "/";
  auto load = [&](const char* name) {
    std::ifstream in(dir + name, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_GT(bytes.size(), 4u) << name;
    return nlohmann::json::parse(bytes.substr(4));
  };
  EXPECT_TRUE(parse_hello(load("hello")).ok());
  EXPECT_TRUE(parse_hello(load("hello-bw")).ok());
  EXPECT_TRUE(parse_hello(load("hello-lat-ud")).ok());
  EXPECT_TRUE(parse_welcome(load("welcome")).ok());
  EXPECT_TRUE(parse_welcome(load("welcome-cm")).ok());
  EXPECT_TRUE(parse_done(load("done")).ok());
  EXPECT_TRUE(parse_sync(load("sync")).ok());
  EXPECT_TRUE(parse_ready(load("ready")).ok());
  EXPECT_TRUE(parse_doctor_report(load("doctor-report")).ok());
  EXPECT_TRUE(parse_bye(load("bye")).ok());
  EXPECT_EQ(load("doctor-request"), doctor_request());  // the request a check sends
}

}  // namespace
}  // namespace rdmacheck::proto

namespace rdmacheck::proto {
namespace {

// Every seed of the fuzz corpus (a frame: 4 bytes of length in network order,
// then the JSON) is a message its parser accepts at this protocol version:
// a seed every parser refuses never leads the fuzzer past the first check.
TEST(Messages, EveryFuzzSeedIsAFrameItsParserAccepts) {
  const auto seed = [](const std::string& name) -> nlohmann::json {
    std::ifstream in(std::string(RDMACHECK_FUZZ_CORPUS) + "/" + name, std::ios::binary);
    const std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (frame.size() < 4) return nullptr;
    const uint32_t n = (uint32_t(uint8_t(frame[0])) << 24) | (uint32_t(uint8_t(frame[1])) << 16) |
                       (uint32_t(uint8_t(frame[2])) << 8) | uint32_t(uint8_t(frame[3]));
    if (n != frame.size() - 4) return nullptr;
    return nlohmann::json::parse(frame.substr(4), nullptr, false);
  };
  for (const char* name : {"hello", "hello-bw", "hello-lat-ud"}) {
    const auto r = parse_hello(seed(name));
    EXPECT_TRUE(r.ok()) << name << ": " << (r ? "" : r.error().message());
  }
  for (const char* name : {"welcome", "welcome-cm"}) {
    const auto r = parse_welcome(seed(name));
    EXPECT_TRUE(r.ok()) << name << ": " << (r ? "" : r.error().message());
  }
  EXPECT_TRUE(parse_done(seed("done")).ok());
  EXPECT_TRUE(parse_bye(seed("bye")).ok());
  EXPECT_TRUE(parse_sync(seed("sync")).ok());
  EXPECT_TRUE(parse_ready(seed("ready")).ok());
  EXPECT_TRUE(parse_doctor_report(seed("doctor-report")).ok());
  EXPECT_EQ(seed("doctor-request")["version"], kVersion);
  EXPECT_TRUE(seed("error").is_object());
}

}  // namespace
}  // namespace rdmacheck::proto
