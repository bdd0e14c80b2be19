// The greeting with key rings: TLS 1.3 with one key per identity (net/tls.h
// under proto/auth.h), the key files a client and a server read, and a
// server's rings re-read so that a removed identity is refused.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "net/tcp.h"
#include "proto/auth.h"
#include "proto/key_ring.h"
#include "proto/meet_for_test.h"
#include "proto/messages.h"
#include "testing/temp_dir.h"

namespace rdmacheck::proto {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string kKeyA = "0123456789abcdefghijklmnopqrstuv";
const std::string kKeyB = "ABCDEFGHIJKLMNOPQRSTUVWXYZ987654";

std::shared_ptr<const KeyRing> ring_of(const std::string& text) {
  auto r = KeyRing::parse(text, "test ring");
  EXPECT_TRUE(r.ok()) << r.error().message();
  return std::make_shared<const KeyRing>(std::move(*r));
}

TEST(AuthTls, EachIdentityItsOwnKeyAndEveryFrameAfterInsideTls13) {
  const ServerKeys keys{{}, ring_of(ring_line("h2", kKeyA) + ring_line("h3", kKeyB))};
  for (const auto& [identity, k] : {std::pair{"h2", kKeyA}, std::pair{"h3", kKeyB}}) {
    const Meeting r = meet(keys, Psk{"client.key", k, identity});
    ASSERT_TRUE(r.client.ok()) << r.client.error().error.message();
    ASSERT_TRUE(r.server.ok()) << r.server.error().error.message();
    EXPECT_EQ(r.server->identity, identity);
    EXPECT_EQ(r.server->log_name,
              std::string("identity ") + identity + ", TLSv1.3 TLS_AES_128_GCM_SHA256");
    EXPECT_EQ(r.client_protection, "TLSv1.3 TLS_AES_128_GCM_SHA256");
    EXPECT_EQ(r.server_protection, r.client_protection);
    EXPECT_EQ(r.received.value("type", ""), "doctor-request") << r.received.dump();
  }
}

TEST(AuthTls, AnUnknownOrRevokedIdentityAndAWrongKeyAreRefusedAndTheServerSaysWhich) {
  const ServerKeys keys{{}, ring_of(ring_line("h2", kKeyA))};
  const Meeting unknown = meet(keys, Psk{"client.key", kKeyA, "h4"});
  ASSERT_FALSE(unknown.server.ok());
  EXPECT_EQ(unknown.server.error().kind, AuthFailure::kFailed);
  EXPECT_NE(unknown.server.error().error.message().find("identity 'h4'"), std::string::npos);
  EXPECT_NE(unknown.server.error().error.message().find("unknown, or revoked"), std::string::npos)
      << unknown.server.error().error.message();
  ASSERT_FALSE(unknown.client.ok());
  EXPECT_EQ(unknown.client.error().kind, AuthFailure::kFailed);
  // The client cannot tell which (TLS refuses both alike): it names both and the log.
  EXPECT_NE(unknown.client.error().error.message().find("the server's log says which"),
            std::string::npos)
      << unknown.client.error().error.message();
  const Meeting wrong = meet(keys, Psk{"client.key", kKeyB, "h2"});
  ASSERT_FALSE(wrong.server.ok());
  EXPECT_EQ(wrong.server.error().kind, AuthFailure::kFailed);
  EXPECT_NE(wrong.server.error().error.message().find("is not this server's"), std::string::npos)
      << wrong.server.error().error.message();
  EXPECT_EQ(wrong.client.error().kind, AuthFailure::kFailed);
  EXPECT_TRUE(wrong.received.is_null());
}

// A server given the names it answers to (serve --server-name) refuses a
// client that dialled another (a connection relayed from another server):
// the client names the server unproven, the server's log the name dialled.
TEST(AuthTls, ANameTheServerWasNotGivenIsRefusedAndBothSidesSayIt) {
  ServerKeys keys{{}, ring_of(ring_line("h2", kKeyA))};
  keys.names = [](const std::string& dialled) { return dialled == "h1"; };
  const Meeting ours = meet(keys, Psk{"client.key", kKeyA, "h2"}, "h1");
  ASSERT_TRUE(ours.server.ok()) << ours.server.error().error.message();
  EXPECT_EQ(ours.received.value("type", ""), "doctor-request");
  const Meeting relayed = meet(keys, Psk{"client.key", kKeyA, "h2"}, "h9");
  ASSERT_FALSE(relayed.client.ok());
  EXPECT_EQ(relayed.client.error().kind, AuthFailure::kServerUnproven);
  EXPECT_NE(relayed.client.error().error.message().find("does not answer to 'h9'"),
            std::string::npos)
      << relayed.client.error().error.message();
  ASSERT_FALSE(relayed.server.ok());
  EXPECT_EQ(relayed.server.error().kind, AuthFailure::kFailed);
  EXPECT_NE(relayed.server.error().error.message().find("the client dialled 'h9'"),
            std::string::npos)
      << relayed.server.error().error.message();
  EXPECT_TRUE(relayed.received.is_null());
}

TEST(AuthTls, KeyFormsThatDoNotMatchAreNamedOnTheClient) {
  const ServerKeys ring{{}, ring_of(ring_line("h2", kKeyA))};
  const Meeting none = meet(ring, std::nullopt);
  EXPECT_EQ(none.client.error().kind, AuthFailure::kRequired);
  EXPECT_EQ(none.server.error().kind, AuthFailure::kRequired);
  const Meeting raw = meet(ring, Psk{"old.psk", kKeyA, ""});
  EXPECT_EQ(raw.client.error().kind, AuthFailure::kFailed);
  EXPECT_NE(raw.client.error().error.message().find("rdmacheck keygen"), std::string::npos);
  const ServerKeys raw_server{{Psk{"serve.psk", kKeyA, ""}}, nullptr};
  const Meeting line = meet(raw_server, Psk{"client.key", kKeyA, "h2"});
  EXPECT_EQ(line.client.error().kind, AuthFailure::kFailed);
  EXPECT_NE(line.client.error().error.message().find("raw key file (no TLS)"), std::string::npos)
      << line.client.error().error.message();
  // A raw key still works against a raw key, in clear after the proof.
  const Meeting old = meet(raw_server, Psk{"copy.psk", kKeyA, ""});
  ASSERT_TRUE(old.client.ok()) << old.client.error().error.message();
  EXPECT_EQ(old.client_protection, "");
  EXPECT_EQ(old.server->log_name, "key serve.psk");
}

class KeyFiles : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
    return p.string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ = test_util::make_temp_dir("key-files");
};

TEST_F(KeyFiles, AClientFileIsOneRingLineOrARawKey) {
  auto line = load_psk(write("c.key", "# for h2\n" + ring_line("h2", kKeyA)));
  ASSERT_TRUE(line.ok()) << line.error().error.message();
  EXPECT_EQ(line->identity, "h2");
  EXPECT_EQ(line->key, kKeyA);
  auto raw = load_psk(write("raw.psk", std::string(32, '\x01') + kKeyA));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->identity, "");
  // A typo in a line is said, not taken for a raw key of those bytes.
  auto typo = load_psk(write("typo.key", "h2 0123zz\n"));
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().kind, AuthFailure::kKeyFileUnreadable);
  EXPECT_NE(typo.error().error.message().find("typo.key:1"), std::string::npos);
  auto two = load_psk(write("two.key", ring_line("h2", kKeyA) + ring_line("h3", kKeyB)));
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().error.message().find("holds 2 keys"), std::string::npos);
  EXPECT_TRUE(*is_key_ring(write("ring", ring_line("h2", kKeyA))));
  EXPECT_FALSE(*is_key_ring(write("raw2.psk", std::string(32, '\x02'))));
}

TEST_F(KeyFiles, AReloadRevokesARemovedIdentityAndABrokenRingKeepsTheOld) {
  const std::string ring = write("ring", ring_line("h2", kKeyA) + ring_line("h3", kKeyB));
  auto files = KeyRingFiles::load({ring});
  ASSERT_TRUE(files.ok()) << files.error().message();
  const auto before = (*files)->current();
  ASSERT_TRUE(before->find("h3"));
  write("ring", ring_line("h2", kKeyA));
  auto n = (*files)->reload();
  ASSERT_TRUE(n.ok()) << n.error().message();
  EXPECT_EQ(*n, 1u);
  EXPECT_FALSE((*files)->current()->find("h3"));
  EXPECT_TRUE(before->find("h3"));  // a handshake already under way keeps its ring
  const Meeting revoked = meet(ServerKeys{{}, (*files)->current()}, Psk{"c", kKeyB, "h3"});
  EXPECT_EQ(revoked.server.error().kind, AuthFailure::kFailed);
  write("ring", "h2 not-hex\n");
  EXPECT_FALSE((*files)->reload().ok());
  EXPECT_TRUE((*files)->current()->find("h2"));
}

TEST_F(KeyFiles, KeygenAddsAFreshKeyOnceAndTheRingStaysPrivate) {
  const std::string ring = (dir_ / "ring").string();
  auto a = add_to_ring(ring, "h2");
  ASSERT_TRUE(a.ok()) << a.error().message();
  auto b = add_to_ring(ring, "h3");
  ASSERT_TRUE(b.ok()) << b.error().message();
  EXPECT_NE(*a, *b);
  struct stat st {};
  ASSERT_EQ(::stat(ring.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = KeyRing::load(ring);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  EXPECT_EQ(loaded->size(), 2u);
  auto again = add_to_ring(ring, "h2");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message().find("already holds identity 'h2'"), std::string::npos);
  EXPECT_FALSE(add_to_ring(ring, "bad name").ok());
  // The client's line is what the client loads.
  auto client = load_psk(write("h2.key", *a));
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(client->key, *loaded->find("h2"));
}

}  // namespace
}  // namespace rdmacheck::proto
