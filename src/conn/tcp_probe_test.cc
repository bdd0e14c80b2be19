#include "conn/tcp_probe.h"

#include <gtest/gtest.h>

#include <thread>

#include "proto/auth.h"
#include "testing/closed_port.h"

namespace rdmacheck::conn {
namespace {

using namespace std::chrono_literals;

// The server's side as the session dispatch runs it: the first frame, then the echoes.
std::string serve_one(const Fd& listener) {
  std::string peer;
  auto conn = tcp_accept(listener, deadline_in(5s), &peer);
  if (!conn) return "accept: " + conn.error().message();
  Channel ch(std::move(*conn));
  if (auto g = proto::greet_client(ch, {}, deadline_in(5s)); !g) return "greeting failed";
  auto first = recv_frame(ch, deadline_in(5s));
  if (!first) return "first frame: " + first.error().message();
  return answer_tcp_echo(ch, *first, deadline_in(5s));
}

TEST(TcpProbe, EchoesOverLoopbackAreCleanAndCounted) {
  auto listener = tcp_listen("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok()) << listener.error().message();
  std::string outcome;
  std::thread server([&] { outcome = serve_one(*listener); });
  TcpProbeOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = local_port(*listener);
  o.count = 5;
  const TcpProbeReport r = run_tcp_probe(o);
  server.join();
  EXPECT_TRUE(r.connected) << r.error;
  EXPECT_EQ(r.tally.sent, 5);
  EXPECT_EQ(r.tally.answered, 5);
  EXPECT_EQ(r.tally.transport, "tcp");
  EXPECT_EQ(r.tally.size, 1000u);
  EXPECT_FALSE(r.lossy());
  EXPECT_EQ(outcome, "echoed 5 frames");
  EXPECT_LE(r.rtt_min_us, r.rtt_median_us);
  EXPECT_EQ(to_json(r)["answered"], 5);
  EXPECT_NE(describe(r).find("TCP 1000 B: 5/5 echoes"), std::string::npos) << describe(r);
}

TEST(TcpProbe, NoServerIsNotConnectedAndSaysWhy) {
  const test_util::ClosedPort closed;
  TcpProbeOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = closed.port();
  const TcpProbeReport r = run_tcp_probe(o);
  EXPECT_FALSE(r.connected);
  EXPECT_NE(describe(r).find("could not connect"), std::string::npos);
}

TEST(TcpProbe, LossyWhenRetransmittedDelayedOrMissing) {
  TcpProbeReport r;
  r.tally = ProbeTally{"tcp", 1000, 20, 20};
  EXPECT_FALSE(r.lossy());
  r.retrans = 1;
  EXPECT_TRUE(r.lossy());
  r.retrans = 0;
  r.delayed = 1;
  EXPECT_TRUE(r.lossy());
  r.delayed = 0;
  r.tally.answered = 19;
  EXPECT_TRUE(r.lossy());
}

// 200 ms of path delay is not loss; an echo a minimum RTO behind the rest is.
TEST(TcpProbe, DelayedMeansLaterThanTheFastestByAnRto) {
  EXPECT_EQ(delayed_echoes({}), 0);
  EXPECT_EQ(delayed_echoes({204200, 205600, 213100}), 0);  // lab: netem delay 200ms
  EXPECT_EQ(delayed_echoes({1300, 1600, 5300, 212000}), 1);
}

}  // namespace
}  // namespace rdmacheck::conn
