#include "proto/auth.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "net/tcp.h"
#include "proto/messages.h"
#include "testing/temp_dir.h"

namespace rdmacheck::proto {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::pair<Channel, Channel> socket_pair() {
  int sv[2] = {-1, -1};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  return {Channel(Fd(sv[0])), Channel(Fd(sv[1]))};
}

Psk key(const std::string& name, char fill) { return Psk{name, std::string(32, fill)}; }

struct Outcome {
  Result<Admitted, AuthError> server;
  Result<Unit, AuthError> client;
};

// Both sides of one connection, the server on its own thread.
Outcome handshake(const ServerKeys& server_keys, const std::optional<Psk>& client_key) {
  auto [s, c] = socket_pair();
  auto server = std::async(std::launch::async, [&, fd = std::move(s)]() mutable {
    return greet_client(fd, server_keys, deadline_in(2s));
  });
  auto client = meet_server(c, client_key, "server", deadline_in(2s));
  c = Channel();  // a server still waiting for our proof sees us go
  return Outcome{server.get(), std::move(client)};
}

TEST(Auth, TheRightKeyPassesBothWays) {
  auto o = handshake({{key("k", 'a')}, nullptr}, key("client copy", 'a'));
  ASSERT_TRUE(o.client.ok()) << o.client.error().error.message();
  ASSERT_TRUE(o.server.ok()) << o.server.error().error.message();
  EXPECT_EQ(o.server->raw_key, 0);
}

TEST(Auth, AWrongKeyIsRefusedAndTheClientIsTold) {
  auto o = handshake({{key("k", 'a')}, nullptr}, key("c", 'b'));
  ASSERT_FALSE(o.client.ok());
  EXPECT_EQ(o.client.error().kind, AuthFailure::kFailed);
  ASSERT_FALSE(o.server.ok());
  EXPECT_EQ(o.server.error().kind, AuthFailure::kFailed);
}

TEST(Auth, NoKeyAgainstAKeyedServerIsAuthRequired) {
  auto o = handshake({{key("k", 'a')}, nullptr}, std::nullopt);
  ASSERT_FALSE(o.client.ok());
  EXPECT_EQ(o.client.error().kind, AuthFailure::kRequired);
  ASSERT_FALSE(o.server.ok());
  EXPECT_EQ(o.server.error().kind, AuthFailure::kRequired);
}

TEST(Auth, AKeyedClientWillNotTalkToAnUnkeyedServer) {
  auto o = handshake(ServerKeys{}, key("c", 'a'));
  ASSERT_FALSE(o.client.ok());
  EXPECT_EQ(o.client.error().kind, AuthFailure::kServerUnkeyed);
  EXPECT_TRUE(o.server.ok());  // the server's part was the greeting; the session then ends
}

TEST(Auth, WithoutKeysOnEitherSideTheGreetingIsAll) {
  auto o = handshake(ServerKeys{}, std::nullopt);
  EXPECT_TRUE(o.client.ok());
  ASSERT_TRUE(o.server.ok());
  EXPECT_EQ(o.server->raw_key, -1);
}

TEST(Auth, TwoServerKeysRollAndTheServerSaysWhichOneMatched) {
  const ServerKeys keys{{key("old", 'a'), key("new", 'b')}, nullptr};
  auto old_client = handshake(keys, key("c", 'a'));
  ASSERT_TRUE(old_client.client.ok());
  ASSERT_TRUE(old_client.server.ok());
  EXPECT_EQ(old_client.server->raw_key, 0);
  auto new_client = handshake(keys, key("c", 'b'));
  ASSERT_TRUE(new_client.client.ok());
  ASSERT_TRUE(new_client.server.ok());
  EXPECT_EQ(new_client.server->raw_key, 1);
  auto neither = handshake(keys, key("c", 'c'));
  EXPECT_EQ(neither.client.error().kind, AuthFailure::kFailed);
}

TEST(Auth, ProofsAreBoundToDirectionNoncesAndKey) {
  const Nonce ns = fresh_nonce();
  const Nonce nc = fresh_nonce();
  EXPECT_NE(ns, nc);
  const std::string k(32, 'k');
  EXPECT_NE(auth_proof(k, Side::kClient, ns, nc), auth_proof(k, Side::kServer, ns, nc));
  EXPECT_NE(auth_proof(k, Side::kClient, ns, nc), auth_proof(k, Side::kClient, nc, ns));
  EXPECT_NE(auth_proof(k, Side::kClient, ns, nc),
            auth_proof(std::string(32, 'l'), Side::kClient, ns, nc));
  EXPECT_EQ(auth_proof(k, Side::kClient, ns, nc), auth_proof(k, Side::kClient, ns, nc));
}

// Drives the server by hand: reads its greeting's nonce, then sends AUTH_FOR(ns).
template <typename F>
std::pair<Result<Admitted, AuthError>, nlohmann::json> by_hand(const ServerKeys& keys, F auth_for) {
  auto [s, c] = socket_pair();
  auto server = std::async(std::launch::async, [&, fd = std::move(s)]() mutable {
    return greet_client(fd, keys, deadline_in(2s));
  });
  auto greeting = recv_frame(c, deadline_in(2s));
  EXPECT_TRUE(greeting.ok());
  nlohmann::json sent = auth_for(greeting.ok() ? (*greeting)["nonce"].get<std::string>() : "");
  if (!sent.is_null()) {
    EXPECT_TRUE(send_frame(c, sent, deadline_in(2s)).ok());
  }
  auto reply = recv_frame(c, deadline_in(2s));
  c = Channel();
  return {server.get(), reply.ok() ? *reply : nlohmann::json()};
}

std::string hex(const std::array<uint8_t, 32>& b) {
  std::string s;
  for (auto x : b) s += fmt::format("{:02x}", x);
  return s;
}

Nonce unhex(const std::string& s) {
  Nonce n{};
  for (size_t i = 0; i < n.size() && 2 * i + 1 < s.size(); ++i) {
    n[i] = static_cast<uint8_t>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  }
  return n;
}

TEST(Auth, ARecordedProofDoesNotOpenASecondConnection) {
  const ServerKeys keys{{key("k", 'a')}, nullptr};
  nlohmann::json recorded;
  auto first = by_hand(keys, [&](const std::string& ns) {
    const Nonce nc = fresh_nonce();
    recorded = {{"type", "auth"},
                {"version", kVersion},
                {"nonce", hex(nc)},
                {"proof", hex(auth_proof(keys.raw[0].key, Side::kClient, unhex(ns), nc))}};
    return recorded;
  });
  ASSERT_TRUE(first.first.ok());
  EXPECT_EQ(first.second["type"], "auth-ok");
  // The same message on a new connection: the server's nonce is new, the proof stale.
  auto replay = by_hand(keys, [&](const std::string&) { return recorded; });
  ASSERT_FALSE(replay.first.ok());
  EXPECT_EQ(replay.first.error().kind, AuthFailure::kFailed);
  EXPECT_EQ(replay.second["code"], "auth-failed");
}

TEST(Auth, TheServersOwnNonceOrProofSentBackIsRefused) {
  const ServerKeys keys{{key("k", 'a')}, nullptr};
  auto echo = by_hand(keys, [&](const std::string& ns) {
    return nlohmann::json{
        {"type", "auth"},
        {"version", kVersion},
        {"nonce", ns},
        {"proof", hex(auth_proof(keys.raw[0].key, Side::kClient, unhex(ns), unhex(ns)))}};
  });
  ASSERT_FALSE(echo.first.ok());
  EXPECT_EQ(echo.first.error().kind, AuthFailure::kProtocol);
  // A server-direction proof is no client proof.
  auto reflected = by_hand(keys, [&](const std::string& ns) {
    const Nonce nc = fresh_nonce();
    return nlohmann::json{
        {"type", "auth"},
        {"version", kVersion},
        {"nonce", hex(nc)},
        {"proof", hex(auth_proof(keys.raw[0].key, Side::kServer, unhex(ns), nc))}};
  });
  ASSERT_FALSE(reflected.first.ok());
  EXPECT_EQ(reflected.first.error().kind, AuthFailure::kFailed);
}

TEST(Auth, GarbageTruncatedAndOldClientsAreRefusedCleanly) {
  const ServerKeys keys{{key("k", 'a')}, nullptr};
  for (const nlohmann::json& bad : {
           nlohmann::json{{"type", "auth"}, {"version", kVersion}},
           nlohmann::json{{"type", "auth"}, {"version", kVersion}, {"nonce", "zz"}, {"proof", 7}},
           nlohmann::json{{"type", "auth"},
                          {"version", kVersion},
                          {"nonce", std::string(64, 'g')},
                          {"proof", std::string(64, '0')}},
           nlohmann::json{{"type", "auth"},
                          {"version", kVersion},
                          {"nonce", std::string(63, '0')},
                          {"proof", std::string(64, '0')}},
       }) {
    auto r = by_hand(keys, [&](const std::string&) { return bad; });
    ASSERT_FALSE(r.first.ok()) << bad.dump();
    EXPECT_EQ(r.first.error().kind, AuthFailure::kProtocol) << bad.dump();
  }
  // A protocol-1 client sends its hello without reading the greeting.
  auto old = by_hand(keys, [](const std::string&) {
    return nlohmann::json{{"type", "hello"}, {"version", 1}};
  });
  ASSERT_FALSE(old.first.ok());
  EXPECT_NE(old.second["message"].get<std::string>().find("same rdmacheck version"),
            std::string::npos);
  // A client that skips the proof.
  auto skip = by_hand(keys, [](const std::string&) {
    return nlohmann::json{{"type", "doctor-request"}, {"version", kVersion}};
  });
  EXPECT_EQ(skip.first.error().kind, AuthFailure::kRequired);
  EXPECT_EQ(skip.second["code"], "auth-required");
  // Truncated: a frame header promising more than comes, then the client leaves.
  {
    auto [s, c] = socket_pair();
    auto server = std::async(std::launch::async, [&, fd = std::move(s)]() mutable {
      return greet_client(fd, keys, deadline_in(2s));
    });
    ASSERT_TRUE(recv_frame(c, deadline_in(2s)).ok());
    const char partial[] = {0, 0, 0, 100, '{', '"'};
    ASSERT_EQ(::send(c.fd().get(), partial, sizeof partial, MSG_NOSIGNAL), 6);
    c = Channel();
    auto r = server.get();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, AuthFailure::kProtocol);
  }
}

// The client against servers that lie or babble.
Result<Unit, AuthError> client_against(const std::vector<nlohmann::json>& server_frames,
                                       const std::optional<Psk>& k) {
  auto [s, c] = socket_pair();
  auto server = std::async(std::launch::async, [&, fd = std::move(s)] {
    for (const auto& f : server_frames) {
      (void)send_frame(fd, f, deadline_in(2s));
      if (&f != &server_frames.back()) (void)recv_frame(fd, deadline_in(2s));
    }
  });
  auto r = meet_server(c, k, "server", deadline_in(2s));
  server.get();
  return r;
}

TEST(Auth, TheClientChecksTheServersProofAndGreeting) {
  const nlohmann::json greeting = {
      {"type", "greeting"}, {"version", kVersion}, {"auth", "psk"}, {"nonce", hex(fresh_nonce())}};
  auto wrong = client_against(
      {greeting, {{"type", "auth-ok"}, {"version", kVersion}, {"proof", std::string(64, '0')}}},
      key("c", 'a'));
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, AuthFailure::kServerUnproven);
  auto old =
      client_against({{{"type", "greeting"}, {"version", 1}, {"auth", "none"}}}, std::nullopt);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().kind, AuthFailure::kProtocol);
  EXPECT_NE(old.error().error.message().find("same rdmacheck version"), std::string::npos);
  auto not_allowed =
      client_against({refusal_message(AuthFailure::kNotAllowed, "no")}, std::nullopt);
  EXPECT_EQ(not_allowed.error().kind, AuthFailure::kNotAllowed);
  auto busy = client_against({error_message("server busy: too many sessions")}, std::nullopt);
  EXPECT_EQ(busy.error().kind, AuthFailure::kNone);
  EXPECT_TRUE(busy.error().refused);
  auto garbage = client_against(
      {{{"type", "greeting"}, {"version", kVersion}, {"auth", "psk"}, {"nonce", "short"}}},
      key("c", 'a'));
  EXPECT_EQ(garbage.error().kind, AuthFailure::kProtocol);
  // Every rdmacheck since protocol version 2 greets first, in its framing: a
  // listener that closes at once, or whose first bytes are no frame, is
  // another service; silence is another service or a pre-v2 rdmacheck.
  {
    auto [s, c] = socket_pair();
    s = Channel();  // closes at once
    const auto closed = meet_server(c, std::nullopt, "server", deadline_in(2s));
    ASSERT_FALSE(closed.ok());
    EXPECT_EQ(closed.error().kind, AuthFailure::kForeign);
  }
  {
    auto [s, c] = socket_pair();
    const std::string banner = "SSH-2.0-OpenSSH_9.2p1\r\n";
    ASSERT_EQ(::send(s.fd().get(), banner.data(), banner.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(banner.size()));
    EXPECT_EQ(meet_server(c, std::nullopt, "server", deadline_in(2s)).error().kind,
              AuthFailure::kForeign);
  }
  {
    auto [s, c] = socket_pair();  // s stays open and says nothing
    const auto silent = meet_server(c, std::nullopt, "server", deadline_in(200ms));
    ASSERT_FALSE(silent.ok());
    EXPECT_EQ(silent.error().kind, AuthFailure::kSilent);
    EXPECT_NE(silent.error().error.message().find("no greeting"), std::string::npos);
  }
}

class KeyFile : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& bytes, mode_t mode) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << bytes;
    ::chmod(p.c_str(), mode);
    return p;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ = test_util::make_temp_dir("psk");
};

TEST_F(KeyFile, OwnerOnlyFilesAreKeys) {
  auto k = load_psk(write("ok.psk", std::string(32, 'x'), 0600));
  ASSERT_TRUE(k.ok()) << k.error().error.message();
  EXPECT_EQ(k->key, std::string(32, 'x'));
  EXPECT_TRUE(load_psk(write("ro.psk", std::string(32, 'x'), 0400)).ok());
}

// A client's key under systemd (LoadCredential=, e.g. monitor's unit) is
// 0440 with an ACL: systemd set that mode, so it is this service's key.
TEST_F(KeyFile, ACredentialSystemdHandedOverIsAKeyWhateverItsMode) {
  const auto file = write("client.key", std::string(32, 'x'), 0440);
  ASSERT_FALSE(load_psk(file).ok());
  ASSERT_EQ(::setenv("CREDENTIALS_DIRECTORY", dir_.c_str(), 1), 0);
  auto k = load_psk(file);
  ::unsetenv("CREDENTIALS_DIRECTORY");
  ASSERT_TRUE(k.ok()) << k.error().error.message();
  EXPECT_EQ(k->key, std::string(32, 'x'));
}

TEST_F(KeyFile, GroupOrOthersAccessIsRefusedInOneLine) {
  for (mode_t m : {0640, 0604, 0660, 0602, 0610}) {
    auto k = load_psk(write("open.psk", std::string(32, 'x'), m));
    ASSERT_FALSE(k.ok()) << std::oct << m;
    EXPECT_EQ(k.error().kind, AuthFailure::kKeyFileUnsafe);
    const std::string msg = k.error().error.message();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_NE(msg.find("chmod 600"), std::string::npos) << msg;
  }
}

TEST_F(KeyFile, MissingShortAndNonFilesAreUnreadable) {
  EXPECT_EQ(load_psk((dir_ / "none").string()).error().kind, AuthFailure::kKeyFileUnreadable);
  EXPECT_EQ(load_psk(write("short", "abc", 0600)).error().kind, AuthFailure::kKeyFileUnreadable);
  EXPECT_EQ(load_psk(write("long", std::string(5000, 'x'), 0600)).error().kind,
            AuthFailure::kKeyFileUnreadable);
  fs::create_directory(dir_ / "d");
  ::chmod((dir_ / "d").c_str(), 0700);
  EXPECT_EQ(load_psk((dir_ / "d").string()).error().kind, AuthFailure::kKeyFileUnreadable);
}

}  // namespace
}  // namespace rdmacheck::proto
