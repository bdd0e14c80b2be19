// The server's robustness before any RDMA resource is involved: everything
// here is refused during the handshake, so it runs on loopback without a
// device. That the served sessions carry real RDMA is proven in the lab tests.
#include "serve/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <thread>

#include "conn/client_session.h"
#include "conn/tcp_probe.h"
#include "net/tcp.h"
#include "proto/auth.h"
#include "testing/temp_dir.h"

namespace rdmacheck::serve {
namespace {

using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  void start(int max_sessions) {
    // Port 0: the server's own listener takes a free port and names it in its
    // first line (a port found free beforehand may be taken by then).
    o_.bind = "127.0.0.1";
    o_.tcp_port = 0;
    o_.limits.sessions = max_sessions;
    // Long enough for a real client's handshake on a loaded machine; tests
    // that wait for the deadline to pass set a short one themselves.
    if (o_.handshake_timeout == ServerOptions{}.handshake_timeout) o_.handshake_timeout = 10s;
    if (o_.keys.empty() && o_.allow.empty()) o_.insecure = true;
    log_ = std::tmpfile();
    // The server writes while the test reads (and rewinds): every write appends.
    ::fcntl(fileno(log_), F_SETFL, ::fcntl(fileno(log_), F_GETFL) | O_APPEND);
    thread_ = std::thread([this] { rc_ = run_server(o_, stop_, log_); });
    // Ready once it says it listens (a probe connection would be a session itself).
    ASSERT_TRUE(await_log("listening on"));
    const std::string log = log_text();
    const auto at = log.find("listening on 127.0.0.1 port ");
    ASSERT_NE(at, std::string::npos) << log;
    port_ = static_cast<uint16_t>(std::stoi(log.substr(at + 28)));
  }
  // A connection the server admitted: it has sent its greeting.
  Fd admitted(const char* source) {
    Fd c = connect_from(source);
    auto r = recv_frame(c, deadline_in(5s));
    EXPECT_TRUE(r.ok() && proto::message_type(*r) == "greeting")
        << (r.ok() ? r->dump() : r.error().message());
    return c;
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
  // A connection from SOURCE (any 127/8 address reaches the loopback server).
  Fd connect_from(const char* source) {
    Fd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &a.sin_addr);
    EXPECT_EQ(::bind(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << source;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    a.sin_port = htons(port_);
    EXPECT_EQ(::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << source;
    return c;
  }
  // The server's first frame to C: its greeting's type, or its refusal's text.
  template <typename Conn>  // Fd or Channel
  static std::string first_reply(const Conn& c) {
    auto r = recv_frame(c, deadline_in(5s));
    if (!r) return r.error().message();
    return proto::message_type(*r) == "error" ? proto::error_text(*r) : proto::message_type(*r);
  }
  // A session that stays: a TCP echo the client never ends. Invalid when refused.
  Channel echo_session(const char* source) {
    Channel c{connect_from(source)};
    if (!proto::meet_server(c, std::nullopt, "", deadline_in(2s)).ok()) return Channel();
    const nlohmann::json echo = {{"type", "tcp-echo"}, {"version", proto::kVersion}};
    if (!send_frame(c, echo, deadline_in(2s)).ok()) return Channel();
    auto r = recv_frame(c, deadline_in(5s));
    if (!r || proto::message_type(*r) != "tcp-echo") return Channel();
    return c;
  }
  // What the server answers a first request from SOURCE (past the greeting).
  std::string first_request_reply(const char* source) {
    Channel c{connect_from(source)};
    EXPECT_TRUE(proto::meet_server(c, std::nullopt, "", deadline_in(2s)).ok());
    const nlohmann::json echo = {{"type", "tcp-echo"}, {"version", proto::kVersion}};
    EXPECT_TRUE(send_frame(c, echo, deadline_in(2s)).ok());
    return first_reply(c);
  }
  // A well-formed hello the server must refuse for its version.
  std::string ask_with_bad_version(const char* source = "127.0.0.1") {
    Channel c{connect_from(source)};
    EXPECT_TRUE(proto::meet_server(c, std::nullopt, "", deadline_in(2s)).ok());
    nlohmann::json hello = {{"type", "hello"}, {"version", 99}};
    EXPECT_TRUE(send_frame(c, hello, deadline_in(2s)).ok());
    auto r = recv_frame(c, deadline_in(2s));
    return r.ok() ? proto::error_text(*r) : r.error().message();
  }
  // Read through the descriptor, never the server's own FILE: a stream that
  // one thread writes while another rewinds and reads it breaks C's rule for
  // switching a stream between output and input, and a line written in
  // between was lost (about 1 run in 60 under load). The server flushes every
  // line, and pread leaves the stream's position alone.
  std::string log_text() {
    std::string s;
    char buf[4096];
    off_t at = 0;
    while (true) {
      const ssize_t n = ::pread(fileno(log_), buf, sizeof buf, at);
      if (n <= 0) break;
      s.append(buf, static_cast<size_t>(n));
      at += n;
    }
    return s;
  }

  ServerOptions o_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::FILE* log_ = nullptr;
  std::thread thread_;
  int rc_ = -1;
};

// Each bad client costs its own session only. The handshake deadline stays
// long here: a short one would also be the well-behaved client's, which a
// loaded machine can miss (the silent client's deadline is the next test's).
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
  Fd silent = connect();  // says nothing and stays
  // Another address: four handshakes from one address are its limit, and the
  // bad clients' may still be open when the server is asked.
  EXPECT_NE(ask_with_bad_version("127.0.0.2").find("same rdmacheck version"), std::string::npos)
      << log_text();
  EXPECT_TRUE(await_log("no valid handshake")) << log_text();
}

// A client that connects and says nothing is ended by the handshake deadline:
// after the greeting its connection closes.
TEST_F(ServerTest, ASilentClientIsEndedByTheHandshakeDeadline) {
  o_.handshake_timeout = 300ms;
  start(2);
  Fd silent = connect();
  auto greeting = recv_frame(silent, deadline_in(5s));
  ASSERT_TRUE(greeting.ok()) << greeting.error().message();
  EXPECT_EQ(proto::message_type(*greeting), "greeting");
  auto after = recv_frame(silent, deadline_in(10s));
  ASSERT_FALSE(after.ok());
  EXPECT_NE(after.error().errnum, ETIMEDOUT) << after.error().message();
  EXPECT_TRUE(await_log("deadline reached")) << log_text();
}

// Connections that never finish their handshake hold handshake slots, a few
// per address: they cannot keep a client that does finish out of a session.
TEST_F(ServerTest, SilentConnectionsCannotTakeTheSessions) {
  o_.handshake_timeout = 30s;  // the silent ones stay until the test ends
  o_.limits.startups = 3;
  o_.limits.startups_per_source = 2;
  start(1);
  Fd silent1 = admitted("127.0.0.1");
  Fd silent2 = admitted("127.0.0.1");
  EXPECT_EQ(first_reply(connect_from("127.0.0.1")),
            "server busy: 2 connections from 127.0.0.1 are already in their handshake");
  Fd silent3 = admitted("127.0.3.1");
  EXPECT_EQ(first_reply(connect_from("127.0.4.1")),
            "server busy: 3 connections are already in their handshake");
  silent3 = Fd();  // its handshake fails at once: the slot is free again
  ASSERT_TRUE(await_log("session 3 127.0.3.1")) << log_text();
  // A client that does its handshake gets the one session.
  EXPECT_NE(ask_with_bad_version("127.0.2.1").find("same rdmacheck version"), std::string::npos)
      << log_text();
}

TEST_F(ServerTest, SessionsAreCappedPerAddressAndInTotal) {
  o_.limits.sessions = 2;
  o_.limits.sessions_per_source = 1;
  start(2);
  Channel a = echo_session("127.0.0.1");
  ASSERT_TRUE(a.valid());
  EXPECT_EQ(first_request_reply("127.0.0.1"),
            "server busy: 1 sessions from 127.0.0.1 already running")
      << log_text();
  Channel b = echo_session("127.0.0.2");
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(first_request_reply("127.0.0.3"), "server busy: 2 sessions already running");
  // A session's slot is free the moment it ends, not at the next accept.
  a = Channel();
  ASSERT_TRUE(await_log("session 1 127.0.0.1")) << log_text();
  EXPECT_TRUE(echo_session("127.0.0.3").valid()) << log_text();
}

TEST_F(ServerTest, ABufferOverThePinnedBudgetIsRefusedBeforeAnythingIsPinned) {
  o_.limits.pinned_bytes = 1 << 20;
  start(2);
  // The fuzz corpus's ping hello (a frame: 4 bytes of length, then the JSON).
  std::ifstream in(std::string(RDMACHECK_FUZZ_CORPUS) + "/hello", std::ios::binary);
  const std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(frame.size(), 4u);
  nlohmann::json hello = nlohmann::json::parse(frame.substr(4));
  hello["test"]["max_size"] = 600 << 10;  // two halves of 600 KiB: over 1 MiB
  ASSERT_TRUE(proto::parse_hello(hello).ok());
  Channel c{connect_from("127.0.0.1")};
  ASSERT_TRUE(proto::meet_server(c, std::nullopt, "", deadline_in(2s)).ok());
  ASSERT_TRUE(send_frame(c, hello, deadline_in(2s)).ok());
  const std::string why = first_reply(c);
  EXPECT_NE(why.find("refused: a buffer of 1200 KiB is over this server's whole pinned-memory "
                     "budget (1024 KiB, serve --max-pinned); use a smaller -s"),
            std::string::npos)
      << why << log_text();
  // Refused before the device: this host has none, and the log does not say so.
  EXPECT_EQ(log_text().find("setup failed"), std::string::npos) << log_text();
}

// A UD ping's message is one datagram: a hello that asks for more than the
// largest MTU is refused before its buffer is pinned (it pinned 4 slots of
// whatever it asked, 320 MiB for one session, before).
TEST_F(ServerTest, AUdHelloOverOneDatagramIsRefusedBeforeAnythingIsPinned) {
  start(2);
  std::ifstream in(std::string(RDMACHECK_FUZZ_CORPUS) + "/hello", std::ios::binary);
  const std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(frame.size(), 4u);
  nlohmann::json hello = nlohmann::json::parse(frame.substr(4));
  hello["test"]["transport"] = "ud";
  hello["test"]["max_size"] = 1 << 20;
  ASSERT_TRUE(proto::parse_hello(hello).ok());
  Channel c{connect_from("127.0.0.1")};
  ASSERT_TRUE(proto::meet_server(c, std::nullopt, "", deadline_in(2s)).ok());
  ASSERT_TRUE(send_frame(c, hello, deadline_in(2s)).ok());
  const std::string why = first_reply(c);
  EXPECT_NE(why.find("asked for 1048576 bytes over UD; a datagram is at most 4096"),
            std::string::npos)
      << why << log_text();
  EXPECT_EQ(log_text().find("setup failed"), std::string::npos) << log_text();
}

// A daemon's resources after many sessions: the descriptors and the memory
// of a thousand sessions come back (the RDMA objects of real sessions are
// counted in the lab: tests/lab/abuse_lab_test.cc).
size_t open_fds() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                           std::filesystem::directory_iterator()));
}

// g++ says so with __SANITIZE_ADDRESS__, clang (the sanitizer build's) with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
constexpr bool kAddressSanitizer = false;
#endif

uint64_t rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

TEST_F(ServerTest, AThousandSessionsLeaveNoDescriptorOrMemoryBehind) {
  o_.limits.sessions_per_source = 1024;
  o_.limits.startups_per_source = 1024;
  start(1024);
  auto run = [&](int n) {
    int served = 0;
    for (int i = 0; i < n; ++i) served += echo_session("127.0.0.1").valid() ? 1 : 0;
    return served;
  };
  // Polls until every session has ended and given its descriptor back.
  auto settled_fds = [&](size_t at_most) {
    const Deadline d = deadline_in(20s);
    while (open_fds() > at_most && Clock::now() < d) std::this_thread::sleep_for(10ms);
    return open_fds();
  };
  const size_t fds = open_fds();  // the idle server's: its listener, the log
  ASSERT_EQ(run(100), 100);       // warm up: thread arenas, the log file's buffer
  ASSERT_LE(settled_fds(fds), fds);
  const uint64_t rss = rss_kib();
  ASSERT_EQ(run(1000), 1000);
  EXPECT_LE(settled_fds(fds), fds);
  // Each session's thread, stack and frames are gone; allow for allocator slack.
  // Under AddressSanitizer freed memory waits in its quarantine (up to 256 MiB)
  // before reuse, so RSS grows by design there; its leak check at exit is the
  // stricter form of this bound.
  if (!kAddressSanitizer) {
    EXPECT_LT(rss_kib(), rss + 4096) << "RSS grew from " << rss << " KiB";
  }
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
  o_.handshake_timeout = 60s;  // a silent client would hold its slot for a minute
  o_.limits.startups_per_source = 2;
  start(2);
  Fd silent = admitted("127.0.0.1");
  Fd silent2 = admitted("127.0.0.1");
  ASSERT_EQ(first_reply(connect()),
            "server busy: 2 connections from 127.0.0.1 are already in their handshake");
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
  EXPECT_EQ(fs[0].id, FindingId::kAuthFailed);
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

// A caller in the same process (the mesh) learns the port, or why not, from
// on_listening, once, instead of reading the log.
TEST(ServerStart, OnListeningTellsThePortOrWhyItCannotStart) {
  ServerOptions o;
  o.bind = "127.0.0.1";
  o.tcp_port = 0;
  o.insecure = true;
  std::promise<Result<uint16_t>> told;
  int calls = 0;
  o.on_listening = [&](Result<uint16_t> r) {
    ++calls;
    told.set_value(std::move(r));
  };
  std::atomic<bool> stop{false};
  std::FILE* log = std::tmpfile();
  std::thread t([&] { (void)run_server(o, stop, log); });
  auto f = told.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  auto port = f.get();
  ASSERT_TRUE(port.ok()) << port.error().message();
  conn::Target target;
  target.host = "127.0.0.1";
  target.tcp_port = *port;
  EXPECT_TRUE(conn::connect_to_server(target, deadline_in(5s)).ok());
  stop = true;
  t.join();
  std::fclose(log);
  EXPECT_EQ(calls, 1);
  // The port taken: the error, and the same exit status as before.
  auto taken = tcp_listen("127.0.0.1", 0);
  ASSERT_TRUE(taken.ok());
  o.tcp_port = local_port(*taken);
  std::optional<Result<uint16_t>> why;
  o.on_listening = [&](Result<uint16_t> r) { why.emplace(std::move(r)); };
  EXPECT_EQ(run_server(o, stop, stderr), 2);
  ASSERT_TRUE(why.has_value());
  EXPECT_FALSE(why->ok());
  EXPECT_EQ(why->error().errnum, EADDRINUSE) << why->error().message();
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

// --one-off counts a session past the handshake only: a bare connect (a
// port scan), a silent client or garbage ends its own session, never the
// server; the first real client's session decides the exit status.
TEST_F(ServerTest, OneOffServesOneSessionAndExitsWithItsStatus) {
  o_.one_off = true;
  o_.handshake_timeout = 300ms;  // the silent client's deadline
  start(4);
  { Fd scan = connect(); }
  {
    Fd silent = connect();  // says nothing: its session fails at the handshake deadline
    ASSERT_TRUE(await_log("session 2 "));
  }
  {
    Fd garbage = connect();
    ASSERT_EQ(::send(garbage.get(), "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL), 18);
    ASSERT_TRUE(await_log("session 3 "));
  }
  EXPECT_TRUE(thread_.joinable());
  conn::TcpProbeOptions probe;
  probe.target.host = "127.0.0.1";
  probe.target.tcp_port = port_;
  probe.count = 2;
  const auto echoed = conn::run_tcp_probe(probe);
  EXPECT_TRUE(echoed.connected) << echoed.error;
  thread_.join();
  EXPECT_EQ(rc_, 0) << log_text();
  EXPECT_NE(log_text().find("session 4 "), std::string::npos) << log_text();
}

}  // namespace
}  // namespace rdmacheck::serve
