// The server's robustness before any RDMA resource is involved: everything
// here is refused during the handshake, so it runs on loopback without a
// device. That the served sessions carry real RDMA is proven in the lab tests.
#include "serve/server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

#include "net/tcp.h"

namespace rdmacheck::serve {
namespace {

using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  void start(int max_sessions) {
    // Find a free port, then serve on it.
    auto l = tcp_listen("127.0.0.1", 0);
    port_ = local_port(*l);
    *l = Fd();
    o_.bind = "127.0.0.1";
    o_.tcp_port = port_;
    o_.max_sessions = max_sessions;
    o_.handshake_timeout = 300ms;
    log_ = std::tmpfile();
    // The server writes while the test reads (and rewinds): every write appends.
    ::fcntl(fileno(log_), F_SETFL, ::fcntl(fileno(log_), F_GETFL) | O_APPEND);
    thread_ = std::thread([this] { rc_ = run_server(o_, stop_, log_); });
    // Ready once it says it listens (a probe connection would be a session itself).
    ASSERT_TRUE(await_log("listening on"));
  }
  // Polls the server's log for TEXT (the server writes a line per event).
  bool await_log(const std::string& text, std::chrono::milliseconds limit = 10s) {
    const Deadline d = deadline_in(limit);
    while (Clock::now() < d) {
      if (log_text().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  void TearDown() override {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (log_ != nullptr) std::fclose(log_);
  }
  Fd connect() {
    auto c = tcp_connect("127.0.0.1", port_, deadline_in(2s));
    EXPECT_TRUE(c.ok());
    return std::move(*c);
  }
  // A well-formed hello the server must refuse for its version.
  std::string ask_with_bad_version() {
    Fd c = connect();
    nlohmann::json hello = {{"type", "hello"}, {"version", 99}};
    EXPECT_TRUE(send_frame(c, hello, deadline_in(2s)).ok());
    auto r = recv_frame(c, deadline_in(2s));
    return r.ok() ? proto::error_text(*r) : r.error().message();
  }
  std::string log_text() {
    std::fflush(log_);
    std::rewind(log_);
    std::string s;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, log_)) s.append(buf, n);
    return s;
  }

  ServerOptions o_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::FILE* log_ = nullptr;
  std::thread thread_;
  int rc_ = -1;
};

TEST_F(ServerTest, SurvivesGarbageOversizeSilenceAndVanishingClients) {
  start(8);  // room for all of them at once
  {
    Fd c = connect();
    const char http[] = "GET / HTTP/1.0\r\n\r\n";
    ::send(c.get(), http, sizeof http - 1, MSG_NOSIGNAL);
  }
  {
    Fd c = connect();
    const char huge[4] = {0x7f, 0x7f, 0x7f, 0x7f};
    ::send(c.get(), huge, 4, MSG_NOSIGNAL);
  }
  {
    Fd c = connect();  // says nothing and leaves
  }
  Fd silent = connect();  // says nothing and stays: the handshake deadline ends it
  EXPECT_TRUE(await_log("deadline reached")) << log_text();
  EXPECT_NE(ask_with_bad_version().find("same rdmacheck version"), std::string::npos);
  EXPECT_NE(log_text().find("no valid handshake"), std::string::npos) << log_text();
}

TEST_F(ServerTest, BusyWhenSessionsAreFull) {
  start(1);
  Fd first = connect();   // occupies the only session until its handshake deadline
  Fd second = connect();  // accepted after the first (the backlog is FIFO): no room
  auto r = recv_frame(second, deadline_in(5s));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(proto::error_text(*r), "server busy: too many sessions");
  // Once the silent one has timed out, the server serves again.
  ASSERT_TRUE(await_log("deadline reached")) << log_text();
  EXPECT_NE(ask_with_bad_version().find("same rdmacheck version"), std::string::npos);
}

TEST_F(ServerTest, ClientTextCannotForgeLogLinesOrReachTheTerminal) {
  start(4);
  {
    Fd c = connect();
    const nlohmann::json evil = {{"type", "x\x1b]0;pwned\x07\nsession 99 forged end: ok"}};
    ASSERT_TRUE(send_frame(c, evil, deadline_in(2s)).ok());
    (void)recv_frame(c, deadline_in(2s));  // the refusal
  }
  ASSERT_TRUE(await_log("forged end: ok")) << log_text();
  const std::string log = log_text();
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_EQ(log.find("\nsession 99"), std::string::npos) << log;
  EXPECT_NE(log.find("\\x1b]0;pwned\\x07\\x0asession 99 forged"), std::string::npos) << log;
}

TEST_F(ServerTest, AStopEndsRunningSessionsWithinMoments) {
  o_.handshake_timeout = 60s;  // a silent client would hold its session for a minute
  start(2);
  Fd silent = connect();
  Fd silent2 = connect();
  // Both are running sessions once a third is refused for room.
  Fd third = connect();
  auto r = recv_frame(third, deadline_in(5s));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(proto::error_text(*r), "server busy: too many sessions");
  const auto t0 = Clock::now();
  stop_.store(true);
  thread_.join();
  EXPECT_LT(Clock::now() - t0, 5s);
  EXPECT_EQ(rc_, 0);
  EXPECT_NE(log_text().find("stopping, ending 2 session(s)"), std::string::npos) << log_text();
}

TEST_F(ServerTest, BindFailureIsReported) {
  auto l = tcp_listen("127.0.0.1", 0);
  ServerOptions o;
  o.bind = "127.0.0.1";
  o.tcp_port = local_port(*l);
  std::atomic<bool> stop{false};
  // The port is taken (listening without SO_REUSEPORT): bind fails, exit 2.
  EXPECT_EQ(run_server(o, stop, stderr), 2);
}

}  // namespace
}  // namespace rdmacheck::serve
