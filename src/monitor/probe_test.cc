// What a probe round's ping report says about the peer, and how it is
// counted. The reports are built as run_ping fills them for each case (the
// lab runs the real rounds: tests/lab/monitor_lab_test.cc).
#include "monitor/probe.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cerrno>

#include "monitor/daemon.h"
#include "monitor/report.h"
#include "testing/promtool.h"

namespace rdmacheck::monitor {
namespace {

using conn::Stage;

conn::PingReport report(proto::Transport t, Stage failed, int errnum, int sent, int ok,
                        int unanswered = 0) {
  conn::PingReport r;
  r.options.transport = t;
  r.options.count = 5;
  r.obs.failed = failed;
  r.obs.errnum = errnum;
  if (failed != Stage::kDone) r.obs.error = "what failed";
  r.obs.pings_sent = sent;
  r.obs.pings_ok = ok;
  r.obs.pings_unanswered = unanswered;
  for (int i = 0; i < ok; ++i) r.samples.push_back({i + 1, 64, 100.0 * (i + 1)});
  r.elapsed_ms = 1500;
  return r;
}

TEST(Probe, EachKindOfRoundIsCountedAsTheEvidenceSays) {
  const auto rc = proto::Transport::kRc;
  const auto ud = proto::Transport::kUd;
  // Every probe answered.
  auto p = result_of("h1", report(rc, Stage::kDone, 0, 5, 5));
  EXPECT_EQ(p.outcome, Outcome::kUp);
  EXPECT_EQ(p.transport, "rc");
  EXPECT_EQ(p.sent, 5);
  EXPECT_EQ(p.lost, 0);
  ASSERT_EQ(p.rtt_s.size(), 5u);
  EXPECT_DOUBLE_EQ(p.rtt_s[0], 100e-6);
  // A datagram not echoed: the path lost one.
  p = result_of("h1", report(ud, Stage::kDone, 0, 5, 4));
  EXPECT_EQ(p.outcome, Outcome::kLoss);
  EXPECT_EQ(p.lost, 1);
  EXPECT_EQ(p.unanswered, 0);
  // An RC send the peer acknowledged, its answer never came: the host.
  p = result_of("h1", report(rc, Stage::kTraffic, ETIMEDOUT, 3, 2, 1));
  EXPECT_EQ(p.outcome, Outcome::kStall);
  EXPECT_EQ(p.unanswered, 1);
  EXPECT_EQ(p.lost, 0);
  EXPECT_EQ(p.stage, "traffic");
  // An RC send never acknowledged (retries exhausted): the path.
  p = result_of("h1", report(rc, Stage::kTraffic, 0, 1, 0));
  EXPECT_EQ(p.outcome, Outcome::kDown);
  EXPECT_EQ(p.lost, 1);
  // No answer to the TCP connect: the host or its path, all probes lost.
  p = result_of("h1", report(rc, Stage::kTcpConnect, ETIMEDOUT, 0, 0));
  EXPECT_EQ(p.outcome, Outcome::kDown);
  EXPECT_EQ(p.sent, 5);
  EXPECT_EQ(p.lost, 5);
  // The host said no serve listens: not a probe, an error of that stage.
  p = result_of("h1", report(rc, Stage::kTcpConnect, ECONNREFUSED, 0, 0));
  EXPECT_EQ(p.outcome, Outcome::kError);
  EXPECT_EQ(p.sent, 0);
  EXPECT_EQ(p.stage, "tcp connect");
  // A serve that took the connection and never greeted: stalled.
  auto silent = report(rc, Stage::kAuth, ETIMEDOUT, 0, 0);
  silent.obs.auth = proto::AuthFailure::kSilent;
  p = result_of("h1", silent);
  EXPECT_EQ(p.outcome, Outcome::kStall);
  EXPECT_EQ(p.unanswered, 5);
  // ... unless our TCP had to resend on that connection: the path was
  // losing the handshake (seen in FleetLab, 5 % loss on the peer's port).
  silent.obs.tcp_resent = 2;
  p = result_of("h1", silent);
  EXPECT_EQ(p.outcome, Outcome::kDown);
  EXPECT_EQ(p.lost, 5);
  EXPECT_EQ(p.unanswered, 0);
  // The same for a silence after the greeting (the hello unanswered).
  auto no_welcome = report(rc, Stage::kHandshake, ETIMEDOUT, 0, 0);
  p = result_of("h1", no_welcome);
  EXPECT_EQ(p.outcome, Outcome::kStall);
  no_welcome.obs.tcp_resent = 1;
  p = result_of("h1", no_welcome);
  EXPECT_EQ(p.outcome, Outcome::kDown);
  // The round's time ran out with its first probe acknowledged and its
  // answer still on its way (ping counted it as not sent): no verdict.
  auto cut = report(rc, Stage::kDone, 0, 0, 0);
  cut.warnings = {"--timeout: ping 1 was acknowledged by the peer, and the command's time ran out"};
  p = result_of("h1", cut);
  EXPECT_EQ(p.outcome, Outcome::kError);
  EXPECT_EQ(p.stage, "traffic");
  EXPECT_EQ(p.sent + p.lost + p.unanswered, 0);
  // The key refused: an error, never loss.
  auto refused = report(rc, Stage::kAuth, EACCES, 0, 0);
  refused.obs.auth = proto::AuthFailure::kFailed;
  p = result_of("h1", refused);
  EXPECT_EQ(p.outcome, Outcome::kError);
  EXPECT_EQ(p.sent + p.lost + p.unanswered, 0);
}

TEST(Probe, RoundsBecomeTheSeriesTheRulesReadAndFindingsAreReplaced) {
  Registry reg;
  declare_metrics(reg);
  auto lossy = report(proto::Transport::kUd, Stage::kDone, 0, 5, 4);
  Finding f = make_finding(FindingId::kForeign, Severity::kWarn, Layer::kConnection, "lossy");
  set_id_from_wire(f, "roce-loss");
  lossy.findings = {f};
  record(reg, "h2", result_of("h1", lossy));
  record(reg, "h2",
         result_of("h3", report(proto::Transport::kRc, Stage::kTcpConnect, ECONNREFUSED, 0, 0)));
  auto text = reg.exposition();
  const std::string l = "{peer=\"h1\",prober=\"h2\",transport=\"ud\"}";
  EXPECT_NE(text.find("rdmacheck_probes_sent_total" + l + " 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rdmacheck_probes_lost_total" + l + " 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rdmacheck_probes_unanswered_total" + l + " 0\n"), std::string::npos);
  EXPECT_NE(text.find("rdmacheck_probe_rtt_seconds_count" + l + " 4\n"), std::string::npos);
  EXPECT_NE(text.find("rdmacheck_peer_up" + l + " 1\n"), std::string::npos);
  EXPECT_NE(text.find("rdmacheck_finding_active{peer=\"h1\",prober=\"h2\",transport=\"ud\","
                      "id=\"roce-loss\",severity=\"warn\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rdmacheck_probe_errors_total{peer=\"h3\",prober=\"h2\",transport=\"rc\","
                      "stage=\"tcp connect\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rdmacheck_probes_sent_total{peer=\"h3\""), std::string::npos);
  // The next round of h1 finds nothing: its finding is gone, the counters add up.
  record(reg, "h2", result_of("h1", report(proto::Transport::kUd, Stage::kDone, 0, 5, 5)));
  text = reg.exposition();
  EXPECT_EQ(text.find("id=\"roce-loss\""), std::string::npos) << text;
  EXPECT_NE(text.find("rdmacheck_probes_sent_total" + l + " 10\n"), std::string::npos) << text;
#ifdef RDMACHECK_PROMTOOL
  const auto c = test_util::promtool_check_metrics(RDMACHECK_PROMTOOL, text);
  EXPECT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "");
#endif
}

// A work request that failed ends the round with its completion status: a
// series per status, named in libibverbs' words; the device and port the
// round used are what the port counters are read from.
TEST(Probe, AFailedCompletionIsCountedByItsStatus) {
  auto rc = report(proto::Transport::kRc, Stage::kTraffic, 0, 1, 0);
  rc.obs.wc_status = IBV_WC_RETRY_EXC_ERR;
  rc.obs.local = proto::HostFacts{};
  rc.obs.local->device = "rxe0";
  rc.obs.local->port = 1;
  const auto p = result_of("h1", rc);
  ASSERT_TRUE(p.wc_status.has_value());
  EXPECT_EQ(p.device, "rxe0");
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(wc_status_label(IBV_WC_RETRY_EXC_ERR), "transport_retry_counter_exceeded");
  EXPECT_EQ(wc_status_label(IBV_WC_REM_ACCESS_ERR), "remote_access_error");
  Registry reg;
  declare_metrics(reg);
  record(reg, "h2", p);
  auto ok = report(proto::Transport::kRc, Stage::kDone, 0, 5, 5);
  ok.obs.wc_status = IBV_WC_SUCCESS;  // a success is not an error
  record(reg, "h2", result_of("h3", ok));
  const auto text = reg.exposition();
  EXPECT_NE(text.find("rdmacheck_probe_completion_errors_total{peer=\"h1\",prober=\"h2\","
                      "transport=\"rc\",status=\"transport_retry_counter_exceeded\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rdmacheck_probe_completion_errors_total{peer=\"h3\""), std::string::npos)
      << text;
}

// A serve that stamps its turnaround: the network's share of each round trip
// is the round trip less it, in a histogram of its own; a round whose peer
// did not stamp (an older serve) has neither series grow.
TEST(Probe, TheRespondersTurnaroundIsTakenOutOfTheNetworksRoundTrip) {
  auto stamped = report(proto::Transport::kRc, Stage::kDone, 0, 3, 3);
  for (auto& s : stamped.samples) s.turnaround_us = 40;  // rtt 100, 200, 300 us
  stamped.samples[2].turnaround_us = 290;                // the peer sat on the third
  const auto p = result_of("h1", stamped);
  ASSERT_EQ(p.turnaround_s.size(), 3u);
  EXPECT_DOUBLE_EQ(p.turnaround_s[2], 290e-6);
  Registry reg;
  declare_metrics(reg);
  record(reg, "h2", p);
  record(reg, "h2", result_of("h3", report(proto::Transport::kRc, Stage::kDone, 0, 5, 5)));
  const auto text = reg.exposition();
  const std::string h1 = R"({peer="h1",prober="h2",transport="rc")";
  // Network shares: 60, 160 and 10 us: two at or under 100 us, all under 250 us.
  EXPECT_NE(text.find("rdmacheck_probe_network_rtt_seconds_bucket" + h1 + ",le=\"5e-05\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rdmacheck_probe_network_rtt_seconds_bucket" + h1 + ",le=\"0.0001\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rdmacheck_probe_turnaround_seconds_count" + h1 + "} 3\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find(R"(rdmacheck_probe_turnaround_seconds_count{peer="h3")"), std::string::npos)
      << text;
  MonitorReport rep;
  rep.prober = "h2";
  rep.peers = {"h1"};
  rep.rounds = {p};
  const auto j = to_json(rep);
  EXPECT_DOUBLE_EQ(j["rounds"][0]["turnaround_us"]["median"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(j["rounds"][0]["turnaround_us"]["max"].get<double>(), 290);
  EXPECT_NE(format_text(rep).find("the peer's turnaround median 40 us"), std::string::npos)
      << format_text(rep);
#ifdef RDMACHECK_PROMTOOL
  const auto c = test_util::promtool_check_metrics(RDMACHECK_PROMTOOL, text);
  EXPECT_TRUE(c.ok) << c.output;
#endif
}

TEST(Probe, TheOnceReportSaysEachRoundAndItsExitStatus) {
  MonitorReport rep;
  rep.prober = "h2";
  rep.peers = {"h1", "h3"};
  rep.rounds = {result_of("h1", report(proto::Transport::kRc, Stage::kDone, 0, 5, 5))};
  EXPECT_EQ(rep.exit_status(), 0);
  auto silent = report(proto::Transport::kRc, Stage::kAuth, ETIMEDOUT, 0, 0);
  silent.obs.auth = proto::AuthFailure::kSilent;
  rep.rounds.push_back(result_of("h3", silent));
  EXPECT_EQ(rep.exit_status(), 1);
  const auto text = format_text(rep);
  EXPECT_NE(text.find("monitor from h2: 2 peers\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h1  rc  up     5/5 answered; round trip median 300 us (min 100, max 500)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("h3  rc  stall  0/5 answered, 5 unanswered: the peer's host stopped"),
            std::string::npos)
      << text;
  const auto j = to_json(rep);
  EXPECT_EQ(j["rounds"][1]["outcome"], "stall");
  EXPECT_EQ(j["rounds"][0]["rtt_us"]["median"], 300);
  EXPECT_TRUE(j["rounds"][0]["stage"].is_null());
  EXPECT_TRUE(j["rounds"][0]["turnaround_us"].is_null());  // this serve did not stamp
  rep.rounds.push_back(
      result_of("h4", report(proto::Transport::kRc, Stage::kTcpConnect, ECONNREFUSED, 0, 0)));
  EXPECT_EQ(rep.exit_status(), 2);
}

}  // namespace
}  // namespace rdmacheck::monitor
