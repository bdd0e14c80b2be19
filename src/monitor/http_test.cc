#include "monitor/http.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <vector>

#include "net/tcp.h"

namespace rdmacheck::monitor {
namespace {

using namespace std::chrono_literals;

MetricsServer::Body body() {
  return [] { return std::string("rdmacheck_peer_up{peer=\"h2\"} 1\n"); };
}

// One request on a fresh connection; the whole response (the server closes).
std::string fetch(uint16_t port, const std::string& request, std::chrono::milliseconds wait = 5s) {
  auto c = tcp_connect("127.0.0.1", port, deadline_in(wait));
  if (!c) return "(connect: " + c.error().message() + ")";
  if (::send(c->get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return "(send failed)";
  }
  std::string out;
  const auto d = deadline_in(wait);
  char buf[4096];
  for (;;) {
    pollfd p{c->get(), POLLIN, 0};
    if (::poll(&p, 1, ms_left(d)) != 1) return out + "(no close before the deadline)";
    const ssize_t n = ::recv(c->get(), buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

TEST(MetricsHttp, AnswersGetAndHeadOfMetricsAndRefusesTheRest) {
  auto s = MetricsServer::start("127.0.0.1", 0, body());
  ASSERT_TRUE(s.ok()) << s.error().message();
  const uint16_t port = (*s)->port();
  const std::string ok = fetch(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("\r\n\r\nrdmacheck_peer_up{peer=\"h2\"} 1\n"), std::string::npos) << ok;
  const std::string head = fetch(port, "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(head.find("Content-Length: 31\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n") << "HEAD has no body";
  EXPECT_EQ(fetch(port, "GET /metrics?x=1 HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(fetch(port, "GET /other HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(fetch(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(fetch(port, "\x16\x03\x01garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(fetch(port, "GET /" + std::string(9000, 'a')).rfind("HTTP/1.1 400", 0), 0u)
      << "headers over 8 KiB";
  const auto st = (*s)->stats();
  EXPECT_EQ(st.served, 3u);
  EXPECT_EQ(st.rejected, 4u);
}

// 200 connections that say nothing and a slow-loris that dribbles a byte at a
// time take every slot; a scrape still gets in and is answered, the idle
// ones are closed at their deadline, and stop() returns at once.
TEST(MetricsHttp, IdleAndSlowClientsNeverKeepAScrapeOut) {
  HttpOptions o;
  o.request_timeout = 1000ms;
  o.max_connections = 16;
  auto s = MetricsServer::start("127.0.0.1", 0, body(), o);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const uint16_t port = (*s)->port();
  std::vector<Fd> idle;
  for (int i = 0; i < 200; ++i) {
    auto c = tcp_connect("127.0.0.1", port, deadline_in(5s));
    ASSERT_TRUE(c.ok()) << i << ": " << c.error().message();
    idle.push_back(std::move(*c));
  }
  auto loris = tcp_connect("127.0.0.1", port, deadline_in(5s));
  ASSERT_TRUE(loris.ok());
  ASSERT_EQ(::send(loris->get(), "GET /met", 8, MSG_NOSIGNAL), 8);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string r = fetch(port, "GET /metrics HTTP/1.1\r\n\r\n", 3s);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  // Every idle connection is closed by the server, by eviction or deadline.
  for (auto& c : idle) {
    pollfd p{c.get(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "an idle connection stayed open";
    char b;
    EXPECT_LE(::recv(c.get(), &b, 1, 0), 0);
  }
  pollfd p{loris->get(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 5000), 1) << "the slow-loris stayed open";
  const auto st = (*s)->stats();
  EXPECT_GE(st.evicted + st.timed_out, 200u);
  const auto stop0 = std::chrono::steady_clock::now();
  (*s)->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop0, 1s);
}

TEST(MetricsHttp, ABusyPortIsAnErrorNotACrash) {
  auto a = MetricsServer::start("127.0.0.1", 0, body());
  ASSERT_TRUE(a.ok());
  auto b = MetricsServer::start("127.0.0.1", (*a)->port(), body());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().errnum, EADDRINUSE) << b.error().message();
}

}  // namespace
}  // namespace rdmacheck::monitor
