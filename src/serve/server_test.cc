// The server's robustness before any RDMA resource is involved: everything
// here is refused during the handshake, so it runs on loopback without a
// device. That the served sessions carry real RDMA is proven in the lab tests.
#include "serve/server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "conn/client_session.h"
#include "net/tcp.h"
#include "proto/auth.h"
#include "testing/temp_dir.h"

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
    if (o_.keys.empty() && o_.allow.empty()) o_.insecure = true;
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
    EXPECT_TRUE(proto::meet_server(c, std::nullopt, deadline_in(2s)).ok());
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
  o.insecure = true;
  std::atomic<bool> stop{false};
  // The port is taken (listening without SO_REUSEPORT): bind fails, exit 2.
  EXPECT_EQ(run_server(o, stop, stderr), 2);
}

// Who may use the server: nothing of a client's is read, and no verbs object
// made, before its key is proven. The server here has no RDMA device at all:
// a session that got as far as the hello would end in "server setup failed".
class AuthServerTest : public ServerTest {
 protected:
  void SetUp() override {
    o_.keys = {proto::Psk{"current.psk", std::string(32, 'a')},
               proto::Psk{"next.psk", std::string(32, 'b')}};
  }
  conn::Target target(const std::string& psk_file) {
    conn::Target t;
    t.host = "127.0.0.1";
    t.tcp_port = port_;
    t.psk_file = psk_file;
    return t;
  }
  std::string key_file(const std::string& name, char fill) {
    const auto p = dir_ / name;
    std::FILE* f = std::fopen(p.c_str(), "w");
    std::fputs(std::string(32, fill).c_str(), f);
    std::fclose(f);
    ::chmod(p.c_str(), 0600);
    return p.string();
  }
  void TearDown() override {
    ServerTest::TearDown();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_ = test_util::make_temp_dir("serve-auth");
};

TEST_F(AuthServerTest, ClientsWithoutTheKeyGetAnAuthFindingAndNoSession) {
  start(4);
  auto none = conn::connect_to_server(target(""), deadline_in(5s));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().stage, conn::Stage::kAuth);
  EXPECT_EQ(none.error().auth, proto::AuthFailure::kRequired);
  auto wrong = conn::connect_to_server(target(key_file("wrong.psk", 'x')), deadline_in(5s));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().auth, proto::AuthFailure::kFailed);
  ASSERT_TRUE(await_log("auth-failed")) << log_text();
  ASSERT_TRUE(await_log("auth-required")) << log_text();
  const std::string log = log_text();
  EXPECT_EQ(log.find("start:"), std::string::npos) << log;
  EXPECT_EQ(log.find("setup failed"), std::string::npos) << log;
  EXPECT_NE(log.find("must prove the key in current.psk, next.psk"), std::string::npos) << log;
  // The finding a client prints for it.
  conn::ConnObservation obs;
  obs.host = "127.0.0.1";
  obs.failed = wrong.error().stage;
  obs.auth = wrong.error().auth;
  obs.error = wrong.error().error.message();
  const auto fs = conn::diagnose(obs);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "auth-failed");
  EXPECT_FALSE(fs[0].fix.empty());
}

TEST_F(AuthServerTest, EitherRollingKeyOpensTheSessionAndTheLogSaysWhich) {
  start(4);
  for (const auto& [file, fill] : {std::pair{"current.copy", 'a'}, std::pair{"next.copy", 'b'}}) {
    auto ok = conn::connect_to_server(target(key_file(file, fill)), deadline_in(5s));
    ASSERT_TRUE(ok.ok()) << ok.error().error.message();
    // Past the proof the session goes on as before: a doctor request is answered.
    ASSERT_TRUE(send_frame(*ok, proto::doctor_request(), deadline_in(2s)).ok());
  }
  EXPECT_TRUE(await_log("[key current.psk]")) << log_text();
  EXPECT_TRUE(await_log("[key next.psk]")) << log_text();
}

TEST_F(AuthServerTest, AnUnsafeClientKeyFileIsRefusedBeforeConnecting) {
  start(4);
  const std::string f = key_file("open.psk", 'a');
  ::chmod(f.c_str(), 0644);
  auto r = conn::connect_to_server(target(f), deadline_in(5s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().auth, proto::AuthFailure::kKeyFileUnsafe);
  EXPECT_EQ(log_text().find("session 1"), std::string::npos) << log_text();
}

TEST_F(AuthServerTest, DoctorRequestsCanBeRefusedToEveryone) {
  o_.share_doctor = false;
  start(4);
  auto c = conn::connect_to_server(target(key_file("k", 'a')), deadline_in(5s));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(send_frame(*c, proto::doctor_request(), deadline_in(2s)).ok());
  auto r = recv_frame(*c, deadline_in(2s));
  ASSERT_TRUE(r.ok());
  EXPECT_NE(proto::error_text(*r).find("--no-share-doctor"), std::string::npos);
}

TEST_F(ServerTest, AnAddressOutsideTheAllowListIsRefusedAtAccept) {
  o_.allow = {*parse_cidr("192.0.2.0/24")};
  start(4);
  conn::Target t;
  t.host = "127.0.0.1";
  t.tcp_port = port_;
  auto r = conn::connect_to_server(t, deadline_in(5s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().auth, proto::AuthFailure::kNotAllowed);
  EXPECT_NE(r.error().error.message().find("127.0.0.1"), std::string::npos);
  EXPECT_TRUE(await_log("refused 127.0.0.1")) << log_text();
  EXPECT_NE(log_text().find("no --psk-file: clients from 192.0.2.0/24"), std::string::npos);
}

TEST_F(ServerTest, AnAllowedAddressGetsIn) {
  o_.allow = {*parse_cidr("127.0.0.0/8"), *parse_cidr("::1")};
  start(4);
  conn::Target t;
  t.host = "127.0.0.1";
  t.tcp_port = port_;
  EXPECT_TRUE(conn::connect_to_server(t, deadline_in(5s)).ok());
}

TEST(ServerStart, NoKeyNoAllowNeedsInsecure) {
  ServerOptions o;
  o.bind = "127.0.0.1";
  o.tcp_port = 0;
  std::atomic<bool> stop{true};
  EXPECT_EQ(run_server(o, stop, stderr), 2);
  std::FILE* log = std::tmpfile();
  o.insecure = true;
  EXPECT_EQ(run_server(o, stop, log), 0);
  std::rewind(log);
  char buf[4096] = {};
  (void)std::fread(buf, 1, sizeof buf - 1, log);
  std::fclose(log);
  EXPECT_NE(std::string(buf).find("INSECURE"), std::string::npos) << buf;
}

TEST_F(ServerTest, OneOffServesOneSessionAndExitsWithItsStatus) {
  o_.one_off = true;
  start(4);
  {
    Fd c = connect();  // says nothing: its session fails at the handshake deadline
  }
  thread_.join();
  EXPECT_EQ(rc_, 1) << log_text();
  EXPECT_NE(log_text().find("session 1 "), std::string::npos) << log_text();
}

}  // namespace
}  // namespace rdmacheck::serve
