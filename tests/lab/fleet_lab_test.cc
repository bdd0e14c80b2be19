// `rdmacheck monitor` on a fleet of four real guests, watched by Debian's
// real Prometheus with the shipped rules (#26): every guest runs serve and
// monitor; Prometheus runs on h1 and scrapes all four (tests/lab/
// prometheus_fleet.sh drives it and reads its HTTP API, never the daemons).
// The lab's switch loses 5 % on h3's port for a while: the host-or-link
// alert fires for h3 and for nobody else; h4's serve is stopped (SIGSTOP):
// a host stall of h4, not its link; then all is healed and every alert
// resolves. On demand (ctest -L lab-long): about nine minutes of lab.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

std::string serve_on(const std::string& h) {
  return h + ":rdmacheck serve --psk-file /run/lab/lab.psk > /run/lab/" + h +
         "/serve2.log 2>&1 & echo $! > /run/lab/" + h +
         "/serve.pid; for i in $(seq 300); do grep -q listening /run/lab/" + h +
         "/serve2.log && break; sleep 0.1; done; grep -q listening /run/lab/" + h + "/serve2.log";
}

// Every guest's monitor, started after its serve (in its setup), listening
// where h1's Prometheus scrapes it.
std::string monitor_on(const std::string& h) {
  return h +
         ":printf 'h1\\nh2\\nh3\\nh4\\n' > /tmp/peers; rdmacheck monitor --peers /tmp/peers "
         "--interval 1 --timeout 6 --metrics-listen 0.0.0.0:9479 > /tmp/mon.out 2> /tmp/mon.log & "
         "echo $! > /tmp/mon.pid";
}

// Each guest's run: wait for the driver on h1 (h4 stops and resumes its
// serve when told), then end the monitor with SIGTERM and say how it exited.
std::string until_done(const std::string& h) {
  std::string run = h + ":";
  if (h == "h4") {
    run +=
        "while [ ! -e /run/lab/h1/stall-h4 ] && [ ! -e /run/lab/h1/finished ]; do sleep 0.2; "
        "done; s=$(cat /run/lab/h4/serve.pid); kill -STOP $s; touch /run/lab/h4/stopped; "
        "echo stopped; while [ ! -e /run/lab/h1/resume-h4 ] && [ ! -e /run/lab/h1/finished ]; "
        "do sleep 0.2; done; kill -CONT $s; echo resumed; ";
  }
  return run +
         "while [ ! -e /run/lab/h1/finished ]; do sleep 0.5; done; m=$(cat /tmp/mon.pid); "
         "grep -v -e ' start: ' -e ' end: ok (' /run/lab/" +
         h +
         "/serve*.log | tail -n 30; "
         "kill -TERM $m; for i in $(seq 40); do kill -0 $m 2> /dev/null || break; sleep 0.1; "
         "done; kill -0 $m 2> /dev/null && echo monitor-alive || echo monitor-ended";
}

int after(const std::string& out, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(what + " after ([0-9]+) s"))) return -1;
  return std::stoi(m[1]);
}

std::string line_value(const std::string& out, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("(^|\n)" + key + " ([^\n]*)"))) return "";
  return m[2];
}

TEST(FleetLab, PrometheusNamesTheLossyHostAndTheStalledOneAndAllResolve) {
  std::vector<std::string> args = {
      "--hosts", "4", "--timeout", "840", "--fault-at", "60:switch-loss:5@h3", "--fault-until",
      "180:switch-loss:5@h3", "--setup",
      // Prometheus starts while the other guests boot: under TCG it takes a minute.
      std::string("h1:bash " LAB_PROMETHEUS_SCRIPT " start " RDMACHECK_RULES), "--setup",
      monitor_on("h1")};
  for (const char* h : {"h2", "h3", "h4"}) {
    for (const auto& s : {serve_on(h), monitor_on(h)}) {
      args.emplace_back("--setup");
      args.push_back(s);
    }
  }
  for (const std::string& run :
       {std::string("h1:bash " LAB_PROMETHEUS_SCRIPT " drive /run/lab/h1"), until_done("h1"),
        until_done("h2"), until_done("h3"), until_done("h4")}) {
    args.emplace_back("--run");
    args.push_back(run);
  }
  const auto r = run_lab(args);
  std::fprintf(stderr, "fleet lab: %.0f s, exit %d\n", r.seconds, r.exit);
  // On a failure, the lab's own lines and every guest's but the serve logs.
  if (r.exit != 0 || !run_output(r, "h1", 0).is_string()) {
    std::istringstream console(r.console);
    for (std::string line; std::getline(console, line);) {
      if (line.find("| session ") == std::string::npos) std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  ASSERT_TRUE(run_output(r, "h1", 0).is_string()) << r.console;
  const std::string p = run_output(r, "h1", 0).get<std::string>();
  std::fprintf(stderr, "%s", p.c_str());
  for (const char* h : {"h1", "h2", "h3", "h4"}) {
    const auto& out = run_output(r, h, std::string(h) == "h1" ? 1 : 0);
    if (out.is_string()) std::fprintf(stderr, "%s:\n%s", h, out.get<std::string>().c_str());
  }
  // 1: every directed pair up over RC, each with round trips; each answered
  // probe (RC and UD) carries its responder's turnaround.
  EXPECT_EQ(line_value(p, "pairs-up"), "12") << p;
  EXPECT_EQ(line_value(p, "rtt-pairs"), "12") << p;
  EXPECT_EQ(line_value(p, "turnaround-pairs"), "24") << p;
  EXPECT_EQ(line_value(p, "network-rtt-pairs"), "24") << p;
  // 2: h3's port loses: the host-or-link alert fires for h3 within its for:
  // (10 s), scrape and evaluation intervals (2 s each) and the time two of
  // h3's three probers take to lose over 1 % of their probes in the rule's
  // 30 s window, of the first probe lost to h3 (seen 23 to 100 s: a round
  // takes seconds on a lossy emulated path).
  const int loss = after(p, "loss-alert");
  EXPECT_GE(loss, 10) << p;
  EXPECT_LE(loss, 150) << p;
  // 3: h4 stopped: a host stall.
  EXPECT_GE(after(p, "stall-alert"), 0) << p;
  // 4: healed: nothing fires.
  EXPECT_GE(after(p, "resolved"), 0) << p;
  // Nothing else ever fired: no host-or-link for h4 (its stall is not its
  // link), no path alert (h3 explains its pairs), not the fleet.
  std::vector<std::string> seen;
  const std::regex line("(^|\n)seen ([^\n]*)");
  for (auto it = std::sregex_iterator(p.begin(), p.end(), line); it != std::sregex_iterator();
       ++it) {
    seen.push_back((*it)[2]);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"RdmacheckHostOrLink h3", "RdmacheckHostStall h4"}))
      << p;
  // The lab's switch did lose on h3's port, and only there.
  ASSERT_TRUE(r.doc.contains("wire")) << r.console;
  for (const auto& w : r.doc["wire"]) {
    if (w.value("host", "") == "h3") {
      ASSERT_TRUE(w["switch"].is_object()) << w.dump(2);
      EXPECT_GT(w["switch"]["in"]["lost"].get<int>(), 0) << w.dump(2);
      EXPECT_GT(w["switch"]["out"]["lost"].get<int>(), 0) << w.dump(2);
    } else {
      EXPECT_TRUE(w["switch"].is_null()) << w.dump(2);
    }
  }
  // Each monitor ended on SIGTERM within 4 s.
  for (const char* h : {"h1", "h2", "h3", "h4"}) {
    const auto& out = run_output(r, h, std::string(h) == "h1" ? 1 : 0);
    ASSERT_TRUE(out.is_string()) << h << r.console;
    EXPECT_NE(out.get<std::string>().find("monitor-ended"), std::string::npos)
        << h << out.get<std::string>();
  }
  EXPECT_NE(run_output(r, "h4", 0).get<std::string>().find("stopped\nresumed"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::labtest
