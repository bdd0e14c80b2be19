// The monitor's loop on loopback, where no serve listens: every round is an
// error of its TCP connect (no RDMA is needed to get that far), which is
// enough to see the loop schedule rounds, write the textfile, serve
// /metrics, re-read the peer file on reload and end on stop. The lab runs
// real rounds (tests/lab/monitor_lab_test.cc).
#include "monitor/daemon.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "testing/temp_dir.h"

namespace rdmacheck::monitor {
namespace {

// A loopback port nothing listens on: bound, then closed.
uint16_t free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  EXPECT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len), 0);
  ::close(s);
  return ntohs(a.sin_port);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Until PRED holds of the textfile (an event the loop causes), at most 20 s.
bool textfile_shows(const std::filesystem::path& p,
                    const std::function<bool(const std::string&)>& pred) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < end) {
    if (pred(slurp(p))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(MonitorLoop, RoundsTextfileMetricsReloadAndStopOnLoopback) {
  const auto dir = test_util::make_temp_dir("monitor");
  const auto peers = dir / "peers";
  const auto prom = dir / "rdmacheck.prom";
  // 127.0.0.2: loopback, but not an address of an interface (127.0.0.1 is: the prober skips it).
  const std::string first = "127.0.0.2:" + std::to_string(free_port());
  const std::string second = "127.0.0.2:" + std::to_string(free_port());
  std::ofstream(peers) << "# loopback, nothing listening\n" << first << "\n";

  MonitorOptions o;
  o.peers_file = peers.string();
  o.default_port = 4792;
  o.transports = {proto::Transport::kRc};
  o.probe.target.fs = FsRoot::live();
  o.probe.timeout = std::chrono::milliseconds(2000);
  o.schedule.interval = std::chrono::milliseconds(300);
  o.metrics_addr = "127.0.0.1";
  o.textfile = prom.string();
  o.prober = "tester";
  std::mutex mu;
  std::vector<std::string> lines;
  o.log = [&](const std::string& l) {
    const std::lock_guard lock(mu);
    lines.push_back(l);
  };
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  Result<MonitorReport> rep = plain_error("not run", "");
  std::thread loop([&] { rep = run_monitor(o, stop, reload); });
  // A failed assertion returns early: the loop is stopped and joined all the same.
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join{stop, loop};

  const std::string errors = "rdmacheck_probe_errors_total{peer=\"";
  ASSERT_TRUE(textfile_shows(prom, [&](const std::string& t) {
    return t.find(errors + first +
                  "\",prober=\"tester\",transport=\"rc\",stage=\"tcp connect\"} 2") !=
           std::string::npos;
  })) << slurp(prom);
  EXPECT_NE(slurp(prom).find("rdmacheck_peer_up{peer=\"" + first +
                             "\",prober=\"tester\",transport=\"rc\"} 0"),
            std::string::npos);
  EXPECT_EQ(slurp(prom).find("rdmacheck_probes_sent_total{"), std::string::npos)
      << "a refused connection is not a probe";

  // Reload: the new peer is probed, the old one and its series are gone.
  std::ofstream(peers) << second << "\n";
  reload = true;
  ASSERT_TRUE(textfile_shows(prom, [&](const std::string& t) {
    return t.find(errors + second) != std::string::npos && t.find(first) == std::string::npos;
  })) << slurp(prom);
  EXPECT_FALSE(reload.load());

  const auto t0 = std::chrono::steady_clock::now();
  stop = true;
  loop.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_TRUE(rep) << rep.error().message();
  EXPECT_EQ(rep->abandoned, 0u);
  EXPECT_EQ(rep->peers, std::vector<std::string>{second});
  EXPECT_EQ(rep->metrics_listen.rfind("127.0.0.1:", 0), 0u) << rep->metrics_listen;
  {
    const std::lock_guard lock(mu);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[0], "rdmacheck monitor: metrics on http://" + rep->metrics_listen + "/metrics");
    EXPECT_EQ(lines[1], "rdmacheck monitor: SIGHUP: 1 peers from " + peers.string());
  }
  std::filesystem::remove_all(dir);
}

TEST(MonitorLoop, APeerFileOfOnlyThisHostOrNoneIsABadStart) {
  const auto dir = test_util::make_temp_dir("monitor");
  const auto peers = dir / "peers";
  std::ofstream(peers) << "127.0.0.1\n";
  MonitorOptions o;
  o.peers_file = peers.string();
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  auto r = run_monitor(o, stop, reload);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), peers.string() + ": lists only this host: nothing to probe");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::monitor
