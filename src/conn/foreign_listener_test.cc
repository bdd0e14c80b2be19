// A -p that reaches another service: the finding names the port, never the
// version of rdmacheck (the same fix for banner, silence and a close at once).
#include "testing/foreign_listener.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "conn/client_session.h"
#include "conn/ping.h"
#include "net/tcp.h"
#include "testing/temp_dir.h"

namespace rdmacheck::conn {
namespace {

using test_util::ForeignListener;

PingReport ping_at(const ForeignListener& l) {
  PingOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = l.port();
  o.timeout = std::chrono::milliseconds(1500);  // the silent one waits this long
  return run_ping(o);
}

void expect_not_rdmacheck(const PingReport& r, const std::string& id, uint16_t port) {
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(id_name(f), id);
  EXPECT_NE(f.summary.find(fmt::format("something on 127.0.0.1:{} accepted the connection", port)),
            std::string::npos)
      << f.summary;
  EXPECT_NE(f.summary.find("`rdmacheck serve`"), std::string::npos) << f.summary;
  EXPECT_NE(f.fix.find("check -p / the port"), std::string::npos) << f.fix;
}

TEST(ForeignListener, ABannerIsAnotherServiceNotAnotherVersion) {
  ForeignListener l(ForeignListener::Manner::kBanner);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "not-rdmacheck-serve", l.port());
  EXPECT_EQ(r.findings[0].fix.find("same rdmacheck version"), std::string::npos);
}

TEST(ForeignListener, ACloseAtOnceIsAnotherService) {
  ForeignListener l(ForeignListener::Manner::kCloseAtOnce);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "not-rdmacheck-serve", l.port());
  EXPECT_EQ(r.findings[0].fix.find("same rdmacheck version"), std::string::npos);
}

TEST(ForeignListener, SilenceIsAnotherServiceOrAnOldRdmacheckAndSaysWhich) {
  ForeignListener l(ForeignListener::Manner::kSilent);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "no-greeting", l.port());
  EXPECT_NE(r.findings[0].fix.find("older than protocol version 2"), std::string::npos);
  // Silence is also what a path that drops everything for seconds looks
  // like (the lab's switch-flap during the greeting): named, with how to tell.
  EXPECT_NE(r.findings[0].summary.find("or the path lost everything after the TCP handshake"),
            std::string::npos)
      << r.findings[0].summary;
  EXPECT_NE(r.findings[0].fix.find("the path dropped its greeting"), std::string::npos);
}

// L's address, with a greeting wait short enough for a unit test.
Target quick_target(const ForeignListener& l) {
  Target t;
  t.host = "127.0.0.1";
  t.tcp_port = l.port();
  t.greeting_wait = std::chrono::milliseconds(300);
  return t;
}

// A greeting lost once (the lab's switch-flap: a link down for seconds after
// the TCP handshake) is asked for again on a new connection, and the late
// greeting is said; a listener silent on both is named as before.
TEST(ForeignListener, AGreetingLostOnceIsAskedForAgainAndSaid) {
  ForeignListener l(ForeignListener::Manner::kSilentOnce);
  Target t = quick_target(l);
  std::vector<std::string> retried;
  auto sock = connect_to_server(t, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_TRUE(sock) << sock.error().error.message();
  EXPECT_EQ(l.accepted(), 2);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_NE(retried[0].find("sent no greeting within 0.3 s on the first TCP connection and "
                            "greeted on a second"),
            std::string::npos)
      << retried[0];
}

// A connection reset in the middle of the greeting (matrix row
// switch-flap-mid-test: the server's handshake deadline ran out during the
// flap) is asked again too; it used to be auth-protocol, "run the same
// rdmacheck version".
TEST(ForeignListener, AGreetingResetOnceIsAskedForAgainAndSaid) {
  ForeignListener l(ForeignListener::Manner::kResetOnce);
  Target t = quick_target(l);
  const auto dir = test_util::make_temp_dir("reset-once");
  t.psk_file = (dir / "client.psk").string();
  { std::ofstream(t.psk_file) << ForeignListener::kResetOnceKey; }
  ::chmod(t.psk_file.c_str(), 0600);
  std::vector<std::string> retried;
  auto sock = connect_to_server(t, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_TRUE(sock) << sock.error().error.message();
  EXPECT_EQ(l.accepted(), 2);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_NE(retried[0].find(fmt::format("127.0.0.1:{} broke the first TCP connection during the "
                                        "greeting (",
                                        l.port())),
            std::string::npos)
      << retried[0];
  EXPECT_NE(retried[0].find("Connection reset by peer"), std::string::npos) << retried[0];
  std::filesystem::remove_all(dir);
}

TEST(ForeignListener, SilentTwiceIsTheListenersAndEachWaitIsBounded) {
  ForeignListener l(ForeignListener::Manner::kSilent);
  Target t = quick_target(l);
  std::vector<std::string> retried;
  auto sock = connect_to_server(t, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_FALSE(sock);
  EXPECT_EQ(sock.error().auth, proto::AuthFailure::kSilent);
  EXPECT_NE(sock.error().error.message().find("on a second connection too"), std::string::npos)
      << sock.error().error.message();
  EXPECT_EQ(l.accepted(), 2);
  EXPECT_TRUE(retried.empty());
  // Without the time for a second wait, one connection.
  ForeignListener once(ForeignListener::Manner::kSilent);
  t.tcp_port = once.port();
  EXPECT_FALSE(connect_to_server(t, deadline_in(std::chrono::milliseconds(1500)), &retried));
  EXPECT_EQ(once.accepted(), 1);
}

// A connect whose SYNs or ARP requests a flap ate (no SYN-ACK within the
// wait, EHOSTUNREACH from unanswered ARP: matrix row switch-flap-mid-test)
// is tried once more while the deadline leaves 2 s, and a second attempt
// that connects is said; refusals and missing routes are answers. CONNECT is a stand-in
// that answers from a script: which attempt times out is the point here.
TEST(ConnectRetry, ATimedOutConnectIsTriedOnceMoreAndSaid) {
  using std::chrono::milliseconds;
  std::vector<int> script;  // errno per attempt, 0 = connected
  int calls = 0;
  const auto connect = [&](Deadline) -> Result<Fd> {
    const int e = script.at(static_cast<size_t>(calls++));
    if (e != 0) return code_error("connect", e, "127.0.0.1 port 4792");
    return Fd(::dup(0));
  };
  const auto run = [&](std::vector<int> s, Deadline end, std::vector<std::string>* retried) {
    script = std::move(s);
    calls = 0;
    return connect_timing_out_once(connect, end, milliseconds(300), "h1:4792", retried);
  };
  std::vector<std::string> retried;
  auto r = run({ETIMEDOUT, 0}, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_EQ(retried[0],
            "h1:4792: the first TCP connection attempt got no answer (Connection timed out) and a "
            "second connected: the path lost packets for seconds (a flapping link, or heavy "
            "loss), or the server's accept queue was full (a stalled or flooded server: `nstat "
            "-az TcpExtListenOverflows` there counts the connections it dropped)");
  // No ARP answer (the lab's flap before the first packet to the peer): the same.
  retried.clear();
  r = run({EHOSTUNREACH, 0}, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_TRUE(r);
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(retried.size(), 1u);
  EXPECT_NE(retried[0].find("(No route to host) and a second connected: no ARP/ND answer came "
                            "for seconds"),
            std::string::npos)
      << retried[0];
  // No route at all is an answer: once.
  r = run({ENETUNREACH}, deadline_in(std::chrono::seconds(10)), &retried);
  EXPECT_FALSE(r);
  EXPECT_EQ(calls, 1);
  retried.clear();
  r = run({ETIMEDOUT, ETIMEDOUT}, deadline_in(std::chrono::seconds(10)), &retried);
  ASSERT_FALSE(r);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r.error().errnum, ETIMEDOUT);
  EXPECT_NE(r.error().message().find(", on a second attempt too"), std::string::npos)
      << r.error().message();
  EXPECT_TRUE(retried.empty());
  // A refusal is an answer: once.
  r = run({ECONNREFUSED}, deadline_in(std::chrono::seconds(10)), &retried);
  EXPECT_FALSE(r);
  EXPECT_EQ(calls, 1);
  // Without 2 s left after the first wait: once.
  r = run({ETIMEDOUT}, deadline_in(milliseconds(1500)), &retried);
  EXPECT_FALSE(r);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.error().message().find("second attempt"), std::string::npos);
  EXPECT_TRUE(retried.empty());
}

// The real thing on loopback: a listener whose accept queue is full drops
// every SYN (Linux's listen overflow), so connect_to_server times out on
// both attempts, each bounded by Target::connect_wait.
TEST(ConnectRetry, AListenerThatDropsEverySynTimesOutTwiceWithinTheWaits) {
  auto l = tcp_listen("127.0.0.1", 0, 0);  // backlog 0: one queued connection fills it
  ASSERT_TRUE(l) << l.error().message();
  const uint16_t port = local_port(*l);
  auto filler = tcp_connect("127.0.0.1", port, deadline_in(std::chrono::seconds(5)));
  ASSERT_TRUE(filler) << filler.error().message();
  Target t;
  t.host = "127.0.0.1";
  t.tcp_port = port;
  t.connect_wait = std::chrono::milliseconds(300);
  std::vector<std::string> retried;
  const auto t0 = std::chrono::steady_clock::now();
  auto sock = connect_to_server(t, deadline_in(std::chrono::seconds(10)), &retried);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(sock);
  EXPECT_EQ(sock.error().stage, Stage::kTcpConnect);
  EXPECT_EQ(sock.error().error.errnum, ETIMEDOUT) << sock.error().error.message();
  EXPECT_NE(sock.error().error.message().find(", on a second attempt too"), std::string::npos)
      << sock.error().error.message();
  EXPECT_TRUE(retried.empty());
  EXPECT_LT(took, std::chrono::seconds(3));  // two waits of 0.3 s, far from the deadline
}

}  // namespace
}  // namespace rdmacheck::conn
