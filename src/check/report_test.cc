// The checked-in schema describes what check's printer emits: a report with
// every part filled (both hosts, a passed and a failed ping, bandwidth and
// latency runs, a real doctor document) conforms, and a broken one does not.
#include "check/report.h"

#include <gtest/gtest.h>

#include "doctor/doctor.h"
#include "doctor/test_fixture.h"
#include "host/ticket.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace rdmacheck::check {
namespace {

using nlohmann::json;

nlohmann::json check_schema() {
  auto s = load_schema(RDMACHECK_SCHEMAS, "check.schema.json");
  EXPECT_TRUE(s) << s.error().message();
  return s ? *s : json::object();
}

// The document as print (output/print.h) prints it: with schema_version and a ticket
// header (the one the fixture's machine gives).
json printed(const CheckReport& r) {
  const TicketRun run{.rdma_core = "44.0",
                      .command_line = "rdmacheck check h1",
                      .now = std::chrono::system_clock::from_time_t(1796122787),
                      .devices = {"rxe0"}};
  json doc = with_ticket(
      to_json(r), read_ticket_header(FsRoot(doctor::testing::kFixtures + "/rxe-lab-h1"), run));
  doc["exit_status"] = exit_status(r);
  return doc;
}

Finding finding(FindingId id, Severity sev, Layer layer, const std::string& host) {
  const std::string n(name_of(id));
  Finding f{id, sev, layer, "summary of " + n, {"evidence of " + n}, "fix " + n, host};
  return f;
}

proto::HostFacts facts(const std::string& name) {
  return {name,      "0.1.0", "rxe0", 1,  1,     "0000:0000:0000:0000:0000:ffff:c612:0001",
          "RoCE v2", 1024,    1500,   10, "eth0"};
}

conn::PingReport good_ping() {
  conn::PingReport p;
  p.options.target.host = "h1";
  p.obs.local = facts("h2");
  p.obs.peer = facts("h1");
  p.local_timeline = {{"INIT", 12.5, true, ""}, {"RTR", 20, true, ""}, {"RTS", 8, true, ""}};
  p.peer_timeline = {{"INIT", 10, true, ""}, {"ERROR", 0, false, "retry exceeded"}};
  p.samples = {{1, 64, 30.5}, {2, 64, 29}};
  p.stats = conn::rtt_stats({30.5, 29}, 2);
  p.obs.ladder = {{64, true, 30, ""}, {4096, true, 41, ""}};
  p.warnings = {"a warning"};
  p.elapsed_ms = 120;
  return p;
}

conn::PingReport failed_ping() {
  conn::PingReport p;
  p.options.target.host = "h1";
  p.options.transport = proto::Transport::kUd;
  p.options.write = true;
  p.obs.failed = conn::Stage::kTraffic;
  p.obs.error = "no answer";
  p.findings = {finding(FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection, "")};
  return p;
}

perf::PerfReport bw_run() {
  perf::PerfReport r;
  r.ok = true;
  r.options.target.host = "h1";
  r.local = facts("h2");
  r.bw.push_back(perf::BwSample{65536, 1000, 0.5, 1.048576, 1.2, 125, 0.002});
  r.local_counters = {{"hw_counters/sent_pkts", 64000}};
  r.findings = {
      finding(FindingId::kPacketLossDuringTest, Severity::kWarn, Layer::kPerformance, "")};
  return r;
}

perf::PerfReport failed_lat_run() {
  perf::PerfReport r;
  r.options.target.host = "h1";
  r.options.spec.kind = perf::Kind::kLat;
  r.options.spec.histogram = true;
  perf::LatSample l;
  l.size = 64;
  l.stats = perf::lat_stats({10, 20, 30});
  l.histogram = perf::histogram({10, 20, 30});
  r.lat.push_back(l);
  r.failed = conn::Stage::kTraffic;
  r.error = "completion: transport retry counter exceeded";
  return r;
}

CheckReport full_report() {
  CheckReport r;
  r.options.target.host = "h1";
  const doctor::testing::Fixture fx("rxe-lab-doctor-firewall");
  const auto doc = doctor::run_doctor(fx.fs(), fx.src());
  r.local_doctor = doctor::to_json(doc);
  r.peer_doctor = rdmacheck::to_json(doc.findings());
  r.layers = {
      LayerReport{Layer::kDevice,
                  LayerStatus::kWarn,
                  "",
                  {finding(FindingId::kMtuMismatch, Severity::kWarn, Layer::kDevice, "both"),
                   finding(FindingId::kMtuNotJumbo, Severity::kInfo, Layer::kDevice, "h2")},
                  0.8},
      LayerReport{Layer::kConnection, LayerStatus::kPass, "", {}, 1.5},
      LayerReport{Layer::kPerformance,
                  LayerStatus::kFail,
                  "",
                  {finding(FindingId::kPerfTestFailed, Severity::kFail, Layer::kPerformance, "")},
                  4}};
  r.local = facts("h2");
  r.peer = facts("h1");
  r.pings = {good_ping(), failed_ping()};
  r.perf = {bw_run(), failed_lat_run()};
  perf::TcpBaseline tcp;
  tcp.ok = true;
  tcp.bytes = 250000000;
  tcp.seconds = 2;
  tcp.gbps = 1;
  tcp.client_cpu_s = tcp.client_wall_s = 2;
  tcp.server_cpu_s = 1;
  tcp.server_wall_s = 2;
  tcp.echoes = 200;
  tcp.half_rtt_min_us = 40;
  tcp.half_rtt_median_us = 55;
  r.tcp_baseline = tcp;
  r.expired_in = "write lat";
  r.elapsed_ms = 6300;
  return r;
}

TEST(CheckSchema, AFullReportConforms) {
  const auto doc = printed(full_report());
  EXPECT_EQ(doc["tcp_baseline"]["server_cpu_percent"], 50);
  EXPECT_NE(format_text(full_report())
                .find("TCP stream 2.0 s: 1.00 Gb/s, CPU 100 % of a core here (sender), 50 % on "
                      "the server (receiver); TCP 1 B echoes: half RTT min/median 40.00/55.00 us"),
            std::string::npos);
  ASSERT_FALSE(doc["local_doctor"]["checks"].empty());
  EXPECT_EQ(perf::schema_violations(check_schema(), doc), std::vector<std::string>{});
}

// Layer 3's figures with their spread: bandwidth over the run's intervals,
// latency over its round trips; the message rate in the unit it reaches 1 in.
TEST(CheckText, PerformanceFiguresCarryTheirSpread) {
  CheckReport r = full_report();
  r.perf[0].bw[0].interval_gbps = {1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0, 1.02, 0.98, 1.2};
  r.perf[0].bw[0].interval_s = 0.15;
  perf::PerfReport lat = failed_lat_run();
  lat.ok = true;
  lat.failed = conn::Stage::kDone;
  r.perf[1] = lat;
  const std::string text = format_text(r);
  EXPECT_NE(text.find("  write bw 65536 B: 1.05 Gb/s average, 1.20 Gb/s peak, 2.00 kpps\n"
                      "    over 10 intervals of 0.150 s: min 0.900, median 1.00, p99 1.20 Gb/s\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  write lat 64 B: half RTT min/median/p99/max 10.00/20.00/30.00/30.00 us "
                      "over 3 round trips\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(perf::schema_violations(check_schema(), printed(r)), std::vector<std::string>{});
}

TEST(CheckSchema, AReportCutShortConforms) {
  // The device layer failed: no facts, no pings, no perf, no answer from the peer.
  CheckReport r = full_report();
  r.local = r.peer = std::nullopt;
  r.pings.clear();
  r.perf.clear();
  r.tcp_baseline.reset();
  r.peer_doctor = nullptr;
  r.layers[1] = LayerReport{Layer::kConnection, LayerStatus::kNotRun, "the device layer failed"};
  r.layers[2] = LayerReport{Layer::kPerformance, LayerStatus::kNotRun, "the device layer failed"};
  EXPECT_EQ(perf::schema_violations(check_schema(), printed(r)), std::vector<std::string>{});
}

TEST(CheckSchema, ViolationsAreFound) {
  auto doc = printed(full_report());
  doc["exit_status"] = 3;
  doc["layers"][0]["status"] = "OK";
  doc["top_findings"][0]["severity"] = "fatal";
  doc["pings"][1]["failed_stage"] = "done";
  doc["pings"][0]["local"].erase("gid");
  doc["perf"][0]["spec"]["qps"] = 0;  // perf.schema.json applies inside check's document
  doc["local_doctor"]["summary"]["extra"] = 1;
  doc.erase("elapsed_ms");
  const auto v = perf::schema_violations(check_schema(), doc);
  EXPECT_EQ(
      v,
      (std::vector<std::string>{
          R"($: required 'elapsed_ms' is missing)", R"($.exit_status: 3 is not one of [0,1,2])",
          R"($.layers[0].status: "OK" is not one of ["pass","warn","fail","not_run"])",
          R"($.local_doctor.summary.extra: not allowed here)",
          R"($.perf[0].spec.qps: 0 is below the minimum 1)",
          R"($.pings[0].local: required 'gid' is missing)",
          R"($.pings[1].failed_stage: "done" is not one of [null,"resolve","tcp connect","auth","local setup","handshake","qp setup","cm connect","traffic"])",
          R"($.top_findings[0].severity: "fatal" is not one of ["ok","info","warn","fail"])"}))
      << json(v).dump(2);
}

}  // namespace
}  // namespace rdmacheck::check
