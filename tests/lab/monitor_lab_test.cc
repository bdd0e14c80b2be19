// `rdmacheck monitor` on three real guests in one boot: h1 and h3 serve, h2
// watches both. One round of each peer (--once --json), then the daemon with
// /metrics and --textfile (each checked by Prometheus's promtool), a stalled
// serve on h3 (SIGSTOP) counted as unanswered and never as loss, and SIGTERM
// ending the daemon within 2 s.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

// h3's own serve, started in its setup (the lab starts one on h1 only).
const std::string kServeOnH3 =
    "h3:rdmacheck serve --psk-file /run/lab/lab.psk > /run/lab/h3/serve3.log 2>&1 & "
    "echo $! > /run/lab/h3/serve.pid; for i in $(seq 300); do grep -q listening "
    "/run/lab/h3/serve3.log && break; sleep 0.1; done; grep -q listening /run/lab/h3/serve3.log";

// Waits up to 60 s for the textfile to hold PATTERN (grep -E); fails the run otherwise.
std::string wait_for(const std::string& pattern) {
  return "for i in $(seq 600); do grep -qE '" + pattern +
         "' /tmp/m.prom 2>/dev/null && break; sleep 0.1; done; grep -qE '" + pattern +
         "' /tmp/m.prom || { echo 'never: " + pattern + "'; cat /tmp/mon.log; exit 1; }; ";
}

const std::string kDaemon =
    "h2:rdmacheck monitor --peers /tmp/peers --interval 1 --timeout 6 "
    "--metrics-listen 127.0.0.1:9479 --textfile /tmp/m.prom 2> /tmp/mon.log & m=$!; " +
    wait_for(R"(rdmacheck_peer_up\{peer="h1",prober="h2",transport="ud"\} 1)") +
    wait_for(R"(rdmacheck_peer_up\{peer="h3",prober="h2",transport="ud"\} 1)") +
    "promtool check metrics < /tmp/m.prom && echo textfile-ok; "
    // A scrape as Prometheus makes it, its body held to promtool too.
    "exec 3<>/dev/tcp/127.0.0.1/9479; printf 'GET /metrics HTTP/1.1\\r\\nHost: lab\\r\\n\\r\\n' "
    ">&3; cat <&3 > /tmp/scrape; exec 3>&-; head -n 1 /tmp/scrape; "
    "sed '1,/^\\r$/d' /tmp/scrape > /tmp/scrape.body; "
    "promtool check metrics < /tmp/scrape.body && echo scrape-ok; "
    "touch /run/lab/h2/up; " +
    wait_for(R"(rdmacheck_probes_unanswered_total\{peer="h3",prober="h2",transport="rc"\} [1-9])") +
    "echo stall-seen; grep -E '^rdmacheck_probes_(lost|unanswered)_total\\{peer=\"h3\"' "
    "/tmp/m.prom; grep -E "
    "'^rdmacheck_port_events_total\\{counter=\"hw_counters/(sent|rcvd)_pkts\"' "
    "/tmp/m.prom; touch /run/lab/h2/seen-stall; "
    "while [ ! -e /run/lab/h3/resumed ]; do sleep 0.1; done; "
    "t0=$(date +%s%N); kill -TERM $m; wait $m; rc=$?; "
    "echo \"monitor-exit $rc after $(( ($(date +%s%N) - t0) / 1000000 )) ms\"; cat /tmp/mon.log";

const std::string kStallH3 =
    "h3:while [ ! -e /run/lab/h2/up ]; do sleep 0.1; done; kill -STOP $(cat "
    "/run/lab/h3/serve.pid); echo stopped; while [ ! -e /run/lab/h2/seen-stall ]; do sleep "
    "0.1; done; kill -CONT $(cat /run/lab/h3/serve.pid); touch /run/lab/h3/resumed; echo resumed";

uint64_t counter(const std::string& text, const std::string& series) {
  std::smatch m;
  const std::regex re("(^|\n)" + std::regex_replace(series, std::regex(R"([{}"])"), R"(\$&)") +
                      " ([0-9]+)\n");
  return std::regex_search(text, m, re) ? std::stoull(m[2]) : UINT64_MAX;
}

TEST(MonitorLab, RoundsMetricsAStalledServeAndSigterm) {
  const auto r = run_lab({"--hosts", "3", "--timeout", "400", "--setup", kServeOnH3, "--run",
                          "h2:printf 'h1\\nh2\\nh3\\n' > /tmp/peers; rdmacheck monitor --peers "
                          "/tmp/peers --once --json",
                          "--run", kDaemon, "--run", kStallH3});

  // 1: one round per peer and transport, every probe answered; h2 left itself out.
  const auto& once = run_output(r, "h2", 0);
  ASSERT_TRUE(once.is_object()) << r.console;
  EXPECT_EQ(printed_violations(once, "monitor.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(once["prober"], "h2");
  EXPECT_EQ(once["peers"], nlohmann::json({"h1", "h3"}));
  ASSERT_EQ(once["rounds"].size(), 4u) << once.dump(2);
  for (const auto& round : once["rounds"]) {
    EXPECT_EQ(round["outcome"], "up") << round.dump(2);
    EXPECT_EQ(round["sent"], 5);
    EXPECT_EQ(round["answered"], 5);
    EXPECT_GT(round["rtt_us"]["median"].get<double>(), 0);
    // h1's and h3's serve took each round as a probe and stamped each echo
    // with its turnaround, a part of the round trip the prober measured.
    ASSERT_TRUE(round["turnaround_us"].is_object()) << round.dump(2);
    EXPECT_GT(round["turnaround_us"]["max"].get<double>(), 0) << round.dump(2);
    EXPECT_LT(round["turnaround_us"]["max"].get<double>(), round["rtt_us"]["max"].get<double>())
        << round.dump(2);
    EXPECT_EQ(round["device"], "rxe0");
  }
  EXPECT_EQ(run_exit(r, "h2", 0), 0);

  // 2: the daemon's textfile and scrape pass promtool; the stalled serve is
  // unanswered, never lost, to RC (its NIC acknowledged what its process
  // never answered); SIGTERM ends it at once.
  ASSERT_TRUE(run_output(r, "h2", 1).is_string()) << r.console;
  const std::string d = run_output(r, "h2", 1).get<std::string>();
  EXPECT_EQ(run_exit(r, "h2", 1), 0) << d;
  EXPECT_NE(d.find("textfile-ok"), std::string::npos) << d;
  EXPECT_NE(d.find("HTTP/1.1 200 OK"), std::string::npos) << d;
  EXPECT_NE(d.find("scrape-ok"), std::string::npos) << d;
  EXPECT_NE(d.find("stall-seen"), std::string::npos) << d;
  const std::string h3 = R"({peer="h3",prober="h2",transport="rc"})";
  EXPECT_GT(counter(d, "rdmacheck_probes_unanswered_total" + h3), 0u) << d;
  EXPECT_EQ(counter(d, "rdmacheck_probes_lost_total" + h3), 0u) << d;
  // The local port's counters, read after every round: the rounds since the
  // first (its baseline) sent and received packets on rxe0.
  for (const char* c : {"sent_pkts", "rcvd_pkts"}) {
    const auto n =
        counter(d, fmt::format(R"(rdmacheck_port_events_total{{counter="hw_counters/{}",)"
                               R"(device="rxe0",port="1",prober="h2"}})",
                               c));
    EXPECT_GT(n, 0u) << c << d;
    EXPECT_NE(n, UINT64_MAX) << c << d;
  }
  // UD has no acknowledgement: a UD round in flight when h3's serve stopped
  // counts its unechoed datagrams as lost (seen once in CI, 2026-12-04: 1).
  // At most one round of -n 5 straddles the stop; every later round stops at
  // the silent greeting and is unanswered.
  const auto ud_lost =
      counter(d, R"(rdmacheck_probes_lost_total{peer="h3",prober="h2",transport="ud"})");
  EXPECT_LE(ud_lost, 5u) << d;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(d, m, std::regex("monitor-exit ([0-9]+) after ([0-9]+) ms"))) << d;
  EXPECT_EQ(m[1], "0");
  EXPECT_LT(std::stoi(m[2]), 2000) << d;
  EXPECT_NE(d.find("rdmacheck monitor: metrics on http://127.0.0.1:9479/metrics"),
            std::string::npos)
      << d;
  EXPECT_EQ(run_exit(r, "h3", 0), 0) << r.console;
}

}  // namespace
}  // namespace rdmacheck::labtest
