#include "net/tls.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

namespace rdmacheck {
namespace {

using namespace std::chrono_literals;

const std::string kSecret = "0123456789abcdef0123456789abcdef";  // 32 bytes
const std::string kOtherSecret = "fedcba9876543210fedcba9876543210";

std::pair<Fd, Fd> socket_pair() {
  int sv[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {Fd(sv[0]), Fd(sv[1])};
}

TlsChannel::KeyLookup ring(std::map<std::string, std::string> keys) {
  return [keys = std::move(keys)](const std::string& id) -> std::optional<std::string> {
    auto it = keys.find(id);
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

struct Both {
  Result<TlsChannel, TlsError> client;
  Result<TlsChannel, TlsError> server;
};

// The client's handshake here, the server's on a thread, over one socket pair.
Both handshake(const Fd& c, const Fd& s, const TlsKey& key, TlsChannel::KeyLookup keys) {
  auto server = std::async(
      std::launch::async, [&] { return TlsChannel::accept(s, std::move(keys), deadline_in(10s)); });
  auto client = TlsChannel::connect(c, key, "h1", deadline_in(10s));
  return Both{std::move(client), server.get()};
}

TEST(Tls, AKnownIdentityGetsTls13AndFramesBothWays) {
  auto [c, s] = socket_pair();
  auto b = handshake(c, s, TlsKey{"h2", kSecret}, ring({{"h2", kSecret}, {"h3", kOtherSecret}}));
  ASSERT_TRUE(b.client.ok()) << b.client.error().error.message();
  ASSERT_TRUE(b.server.ok()) << b.server.error().error.message();
  EXPECT_EQ(b.server->identity(), "h2");
  EXPECT_EQ(b.client->identity(), "h2");
  EXPECT_EQ(b.server->server_name(), "h1") << "the name the client dialled (SNI)";
  EXPECT_EQ(b.server->version(), "TLSv1.3");
  EXPECT_EQ(b.client->cipher(), "TLS_AES_128_GCM_SHA256");
  ASSERT_TRUE(b.client->send_frame({{"type", "hello"}, {"n", 1}}, deadline_in(5s)).ok());
  auto got = b.server->recv_frame(deadline_in(5s));
  ASSERT_TRUE(got.ok()) << got.error().error.message();
  EXPECT_EQ((*got)["type"], "hello");
  // Two frames in one go, and a large one: the framing holds across records.
  const std::string big(40000, 'x');
  ASSERT_TRUE(b.server->send_frame({{"big", big}}, deadline_in(5s)).ok());
  ASSERT_TRUE(b.server->send_frame({{"after", true}}, deadline_in(5s)).ok());
  auto first = b.client->recv_frame(deadline_in(5s));
  ASSERT_TRUE(first.ok()) << first.error().error.message();
  EXPECT_EQ((*first)["big"], big);
  auto second = b.client->recv_frame(deadline_in(5s));
  ASSERT_TRUE(second.ok()) << second.error().error.message();
  EXPECT_EQ((*second)["after"], true);
  // The server's close ends the client's read as closed, not as an error.
  b.server->close(deadline_in(1s));
  auto after = b.client->recv_frame(deadline_in(5s));
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().fault, TlsFault::kClosed) << after.error().error.message();
}

// A server that answers to some names only refuses a client that dialled
// another (a relay from another server of the fleet: the client's SNI names
// that one) with unrecognized_name, in the handshake; both sides say so.
TEST(Tls, ANameTheServerDoesNotAnswerToIsRefusedBeforeAnyKey) {
  for (const std::string dialled : {"h3", "h1"}) {
    auto [c, s] = socket_pair();
    auto server = std::async(std::launch::async, [&, &s = s] {
      return TlsChannel::accept(
          s,
          [](const std::string& id) -> std::optional<std::string> {
            return id == "h2" ? std::optional<std::string>(kSecret) : std::nullopt;
          },
          deadline_in(10s), [](const std::string& name) { return name == "h1"; });
    });
    auto client = TlsChannel::connect(c, TlsKey{"h2", kSecret}, dialled, deadline_in(10s));
    auto srv = server.get();
    if (dialled == "h1") {
      ASSERT_TRUE(client.ok()) << client.error().error.message();
      ASSERT_TRUE(srv.ok()) << srv.error().error.message();
      EXPECT_EQ(srv->server_name(), "h1");
      continue;
    }
    ASSERT_FALSE(client.ok());
    ASSERT_FALSE(srv.ok());
    EXPECT_EQ(client.error().fault, TlsFault::kWrongName) << client.error().error.message();
    EXPECT_NE(client.error().error.message().find(
                  "the server does not answer to 'h3', the name dialled (serve --server-name)"),
              std::string::npos)
        << client.error().error.message();
    EXPECT_EQ(srv.error().fault, TlsFault::kWrongName) << srv.error().error.message();
    EXPECT_NE(srv.error().error.message().find(
                  "the client dialled 'h3', a name this server does not answer to"),
              std::string::npos)
        << srv.error().error.message();
  }
}

TEST(Tls, AnUnknownOrRevokedIdentityIsRefusedAndTheServerSaysWhich) {
  auto [c, s] = socket_pair();
  auto b = handshake(c, s, TlsKey{"h9", kSecret}, ring({{"h2", kSecret}}));
  ASSERT_FALSE(b.server.ok());
  EXPECT_EQ(b.server.error().fault, TlsFault::kUnknownIdentity);
  EXPECT_NE(b.server.error().error.message().find("identity 'h9'"), std::string::npos)
      << b.server.error().error.message();
  ASSERT_FALSE(b.client.ok());
  EXPECT_EQ(b.client.error().fault, TlsFault::kRefused) << b.client.error().error.message();
  EXPECT_NE(b.client.error().error.message().find("refused identity 'h9'"), std::string::npos);
}

TEST(Tls, AnotherKeyForTheIdentityIsAMismatchNotAnUnknownIdentity) {
  auto [c, s] = socket_pair();
  auto b = handshake(c, s, TlsKey{"h2", kOtherSecret}, ring({{"h2", kSecret}}));
  ASSERT_FALSE(b.server.ok());
  EXPECT_EQ(b.server.error().fault, TlsFault::kKeyMismatch) << b.server.error().error.message();
  ASSERT_FALSE(b.client.ok());
  EXPECT_EQ(b.client.error().fault, TlsFault::kRefused) << b.client.error().error.message();
}

// Bytes between the two ends, both ways, until stopped; the test then
// changes one byte of the next record on its way to the server.
class Relay {
 public:
  Relay(Fd a, Fd b) : a_(std::move(a)), b_(std::move(b)), t_([this] { run(); }) {}
  ~Relay() { stop(); }
  void stop() {
    stop_ = true;
    if (t_.joinable()) t_.join();
  }
  const Fd& a() const { return a_; }
  const Fd& b() const { return b_; }

 private:
  void run() {
    char buf[16384];
    while (!stop_) {
      pollfd p[2] = {{a_.get(), POLLIN, 0}, {b_.get(), POLLIN, 0}};
      if (::poll(p, 2, 10) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if ((p[i].revents & POLLIN) == 0) continue;
        const ssize_t n = ::recv(i == 0 ? a_.get() : b_.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
          ASSERT_EQ(::send(i == 0 ? b_.get() : a_.get(), buf, static_cast<size_t>(n), 0), n);
        }
      }
    }
  }
  Fd a_;
  Fd b_;
  std::atomic<bool> stop_{false};
  std::thread t_;
};

TEST(Tls, OneByteChangedOnThePathFailsTheRecordNeverGivesAWrongFrame) {
  auto [client, relay_a] = socket_pair();
  auto [relay_b, server] = socket_pair();
  Relay relay(std::move(relay_a), std::move(relay_b));
  auto b = handshake(client, server, TlsKey{"h2", kSecret}, ring({{"h2", kSecret}}));
  ASSERT_TRUE(b.client.ok()) << b.client.error().error.message();
  ASSERT_TRUE(b.server.ok()) << b.server.error().error.message();
  relay.stop();
  ASSERT_TRUE(b.client->send_frame({{"result", "ok"}, {"gbps", 100}}, deadline_in(5s)).ok());
  char record[512];
  pollfd p{relay.a().get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  const ssize_t n = ::recv(relay.a().get(), record, sizeof record, 0);
  ASSERT_GT(n, 20);
  record[n / 2] = static_cast<char>(record[n / 2] ^ 0x01);
  ASSERT_EQ(::send(relay.b().get(), record, static_cast<size_t>(n), 0), n);
  auto got = b.server->recv_frame(deadline_in(5s));
  ASSERT_FALSE(got.ok()) << "a changed record was accepted: " << got->dump();
  EXPECT_EQ(got.error().fault, TlsFault::kTampered) << got.error().error.message();
  // The server's alert goes back to the client, which names it as the same
  // fault: the side whose record was changed learns it too.
  p = pollfd{relay.b().get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  const ssize_t alert = ::recv(relay.b().get(), record, sizeof record, 0);
  ASSERT_GT(alert, 0);
  ASSERT_EQ(::send(relay.a().get(), record, static_cast<size_t>(alert), 0), alert);
  auto told = b.client->recv_frame(deadline_in(5s));
  ASSERT_FALSE(told.ok());
  EXPECT_EQ(told.error().fault, TlsFault::kTampered) << told.error().error.message();
  EXPECT_NE(told.error().error.message().find("bad_record_mac"), std::string::npos)
      << told.error().error.message();
}

// An older rdmacheck (or any other service) speaks first in its own framing:
// the client names it as no TLS; a server that reads such a frame does too.
TEST(Tls, APeerThatDoesNotSpeakTlsIsNamedAsSuch) {
  const std::string greeting = R"({"type":"greeting","version":7})";
  const uint32_t len = htonl(static_cast<uint32_t>(greeting.size()));
  std::string frame(reinterpret_cast<const char*>(&len), 4);
  frame += greeting;
  {
    auto [c, s] = socket_pair();
    ASSERT_EQ(::send(s.get(), frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
    auto r = TlsChannel::connect(c, TlsKey{"h2", kSecret}, "h1", deadline_in(5s));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().fault, TlsFault::kNotTls) << r.error().error.message();
  }
  {
    auto [c, s] = socket_pair();
    ASSERT_EQ(::send(c.get(), frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size()));
    auto r = TlsChannel::accept(s, ring({{"h2", kSecret}}), deadline_in(5s));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().fault, TlsFault::kNotTls) << r.error().error.message();
  }
  {
    auto [c, s] = socket_pair();
    const std::string http = "GET / HTTP/1.1\r\nHost: h1\r\n\r\n";
    ASSERT_EQ(::send(c.get(), http.data(), http.size(), 0), static_cast<ssize_t>(http.size()));
    auto r = TlsChannel::accept(s, ring({{"h2", kSecret}}), deadline_in(5s));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().fault, TlsFault::kNotTls) << r.error().error.message();
  }
}

TEST(Tls, ASilentPeerTimesOutAndAClosedOneIsClosed) {
  {
    auto [c, s] = socket_pair();
    const auto t0 = Clock::now();
    auto r = TlsChannel::accept(s, ring({{"h2", kSecret}}), deadline_in(200ms));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().fault, TlsFault::kTimedOut) << r.error().error.message();
    EXPECT_LT(Clock::now() - t0, 5s);
  }
  {
    auto [c, s] = socket_pair();
    s = Fd();  // the server went away before its handshake
    auto r = TlsChannel::connect(c, TlsKey{"h2", kSecret}, "h1", deadline_in(5s));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().fault, TlsFault::kClosed) << r.error().error.message();
  }
}

}  // namespace
}  // namespace rdmacheck
