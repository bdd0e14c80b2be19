// The monitor's loop on loopback, where no serve listens: every round is an
// error of its TCP connect (no RDMA is needed to get that far), which is
// enough to see the loop schedule rounds, write the textfile, serve
// /metrics, re-read the peer file on reload and end on stop. The lab runs
// real rounds (tests/lab/monitor_lab_test.cc).
#include "monitor/daemon.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "net/channel.h"
#include "net/tcp.h"
#include "proto/auth.h"
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

// One request on a fresh connection to 127.0.0.1:PORT, the whole response.
std::string scrape(uint16_t port) {
  auto c = tcp_connect("127.0.0.1", port, deadline_in(std::chrono::seconds(5)));
  if (!c) return "(connect: " + c.error().message() + ")";
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
  if (::send(c->get(), req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    return "(send failed)";
  }
  std::string out;
  const auto d = deadline_in(std::chrono::seconds(5));
  char buf[4096];
  for (;;) {
    pollfd p{c->get(), POLLIN, 0};
    if (::poll(&p, 1, ms_left(d)) != 1) return out + "(no close before the deadline)";
    const ssize_t n = ::recv(c->get(), buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The count in the textfile's series SERIES, -1 when absent.
long count_of(const std::string& text, const std::string& series) {
  const auto at = text.find(series + " ");
  return at == std::string::npos ? -1 : std::stol(text.substr(at + series.size() + 1));
}

// /metrics under abuse while the daemon probes: 200 idle connections, a
// slow-loris and garbage take the endpoint's slots; a scrape still gets its
// answer, the rounds go on counting, and a stop still ends the daemon in 2 s
// with the abusers' connections open.
TEST(MonitorLoop, AbuseOfMetricsNeitherStopsTheRoundsNorKeepsAScrapeOut) {
  const auto dir = test_util::make_temp_dir("monitor-abuse");
  const auto peers = dir / "peers";
  const auto prom = dir / "rdmacheck.prom";
  const std::string peer = "127.0.0.2:" + std::to_string(free_port());
  std::ofstream(peers) << peer << "\n";
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
  std::condition_variable cv;
  uint16_t port = 0;
  o.log = [&](const std::string& l) {
    const std::string head = "rdmacheck monitor: metrics on http://127.0.0.1:";
    if (l.rfind(head, 0) != 0) return;
    const std::lock_guard lock(mu);
    port = static_cast<uint16_t>(std::stoi(l.substr(head.size())));
    cv.notify_all();
  };
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  Result<MonitorReport> rep = plain_error("not run", "");
  std::thread loop([&] { rep = run_monitor(o, stop, reload); });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join{stop, loop};
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return port != 0; }));
  }
  const std::string series = "rdmacheck_probe_errors_total{peer=\"" + peer +
                             "\",prober=\"tester\",transport=\"rc\",stage=\"tcp connect\"}";
  ASSERT_TRUE(textfile_shows(prom, [&](const std::string& t) { return count_of(t, series) >= 1; }))
      << slurp(prom);
  const long before = count_of(slurp(prom), series);

  std::vector<Fd> abusers;
  for (int i = 0; i < 200; ++i) {
    auto c = tcp_connect("127.0.0.1", port, deadline_in(std::chrono::seconds(5)));
    ASSERT_TRUE(c.ok()) << i << ": " << c.error().message();
    abusers.push_back(std::move(*c));
  }
  ASSERT_EQ(::send(abusers[0].get(), "GET /met", 8, MSG_NOSIGNAL), 8);  // and never the rest
  ASSERT_EQ(::send(abusers[1].get(), "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL), 5);
  const std::string r = scrape(port);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
  EXPECT_NE(r.find(series), std::string::npos) << r;
  // The rounds went on meanwhile: the count grew past what it was before.
  EXPECT_TRUE(textfile_shows(prom, [&](const std::string& t) {
    return count_of(t, series) >= before + 2;
  })) << slurp(prom);

  const auto t0 = std::chrono::steady_clock::now();
  stop = true;
  loop.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  ASSERT_TRUE(rep) << rep.error().message();
  std::filesystem::remove_all(dir);
}

// A peer whose serve holds another key: the round is an error of its
// authentication, never a probe lost or unanswered, and the monitor goes
// on (no RDMA is needed: the key is proven before any verbs object). The
// peer is a listener on loopback that greets as serve does, with its key.
TEST(MonitorLoop, APeerWithAnotherKeyIsAnErrorOfItsAuthNeverLoss) {
  using namespace std::chrono_literals;
  const auto dir = test_util::make_temp_dir("monitor-key");
  auto listener = tcp_listen("127.0.0.2", 0);  // 127.0.0.1 is this host: left out as itself
  ASSERT_TRUE(listener.ok()) << listener.error().message();
  const uint16_t port = local_port(*listener);
  proto::ServerKeys keys;
  keys.raw = {proto::Psk{"fleet.psk", std::string(32, 'a')}};
  std::atomic<int> greeted{0};
  std::atomic<bool> done{false};
  std::thread peer([&] {
    while (!done) {
      std::string from;
      auto c = tcp_accept(*listener, deadline_in(200ms), &from);
      if (!c) continue;
      Channel ch(std::move(*c));
      (void)proto::greet_client(ch, keys, deadline_in(5s));
      ++greeted;
    }
  });
  const auto key = dir / "other.psk";
  std::ofstream(key) << std::string(32, 'b');
  std::filesystem::permissions(
      key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::ofstream(dir / "peers") << "127.0.0.2:" << port << "\n";
  MonitorOptions o;
  o.peers_file = (dir / "peers").string();
  o.default_port = 4792;
  o.transports = {proto::Transport::kRc};
  o.probe.target.fs = FsRoot::live();
  o.probe.target.psk_file = key.string();
  o.probe.timeout = 5000ms;
  o.prober = "tester";
  o.once = true;
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  const auto rep = run_monitor(o, stop, reload);
  done = true;
  peer.join();
  ASSERT_TRUE(rep) << rep.error().message();
  ASSERT_EQ(rep->rounds.size(), 1u);
  const ProbeResult& round = rep->rounds[0];
  EXPECT_EQ(round.outcome, Outcome::kError) << round.error;
  EXPECT_EQ(round.stage, "auth") << round.error;
  EXPECT_EQ(round.sent + round.lost + round.unanswered, 0);
  EXPECT_GE(greeted.load(), 1);
  EXPECT_EQ(rep->exit_status(), 2);
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
