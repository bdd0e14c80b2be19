#include "net/tcp.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

#include "testing/closed_port.h"

namespace rdmacheck {
namespace {

using namespace std::chrono_literals;

TEST(Tcp, FramesRoundTripOverLoopback) {
  auto l = tcp_listen("127.0.0.1", 0);
  ASSERT_TRUE(l.ok()) << l.error().message();
  const uint16_t port = local_port(*l);
  std::thread client([port] {
    auto c = tcp_connect("127.0.0.1", port, deadline_in(2s));
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(send_frame(*c, {{"type", "hello"}, {"n", 7}}, deadline_in(2s)).ok());
  });
  std::string peer;
  auto a = tcp_accept(*l, deadline_in(2s), &peer);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(peer.rfind("127.0.0.1:", 0), 0u);
  auto f = recv_frame(*a, deadline_in(2s));
  client.join();
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ((*f)["n"], 7);
}

// A server's log names an IPv6 peer as [addr]:port, so the port cannot be
// read as the address's last group; one over IPv6 loopback, where it has it.
TEST(Tcp, AnIpv6PeerIsBracketed) {
  EXPECT_EQ(format_endpoint("198.18.0.2", 40112), "198.18.0.2:40112");
  EXPECT_EQ(format_endpoint("fd00::2", 40112), "[fd00::2]:40112");
  auto l = tcp_listen("::1", 0);
  if (!l.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << l.error().message();
  const uint16_t port = local_port(*l);
  std::thread client([port] { auto c = tcp_connect("::1", port, deadline_in(2s)); });
  std::string peer;
  auto a = tcp_accept(*l, deadline_in(2s), &peer);
  client.join();
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(peer.rfind("[::1]:", 0), 0u) << peer;
}

TEST(Tcp, RefusedConnectionCarriesEconnrefused) {
  const test_util::ClosedPort closed;
  auto c = tcp_connect("127.0.0.1", closed.port(), deadline_in(2s));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().errnum, ECONNREFUSED);
}

TEST(Tcp, UnknownHostIsAResolveError) {
  auto c = tcp_connect("no-such-host.invalid", 1, deadline_in(2s));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().call, "getaddrinfo");
}

TEST(Tcp, AcceptAndReadHonourDeadlines) {
  auto l = tcp_listen("127.0.0.1", 0);
  const auto t0 = Clock::now();
  auto a = tcp_accept(*l, deadline_in(100ms), nullptr);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().errnum, ETIMEDOUT);
  EXPECT_LT(Clock::now() - t0, 2s);
}

TEST(Tcp, OversizeAndGarbageFramesAreRefused) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  Fd a(sv[0]);
  Fd b(sv[1]);
  const char huge[4] = {0x7f, 0, 0, 0};
  ASSERT_EQ(::send(a.get(), huge, 4, 0), 4);
  auto r = recv_frame(b, deadline_in(1s));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("outside 1..65536"), std::string::npos);

  const char junk[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};
  ASSERT_EQ(::send(a.get(), junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
  r = recv_frame(b, deadline_in(1s));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("not a JSON object"), std::string::npos);

  // A truncated frame times out at the deadline instead of blocking.
  const char part[] = {0, 0, 0, 50, '{'};
  ASSERT_EQ(::send(a.get(), part, sizeof part, 0), static_cast<ssize_t>(sizeof part));
  r = recv_frame(b, deadline_in(200ms));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, ETIMEDOUT);
}

}  // namespace
}  // namespace rdmacheck
