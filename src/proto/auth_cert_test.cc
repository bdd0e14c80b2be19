// The greeting with certificates (mutual TLS 1.3, net/tls.h TlsCertContext
// under proto/auth.h): the client's CN is its identity, a server whose
// certificate does not name the host dialled is refused by the client, and a
// revoked client or one of another CA is refused by the server. The PKI is
// made by tests/pki/make-test-pki (the openssl CLI) in a temp directory.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstdlib>
#include <future>
#include <string>

#include "net/tcp.h"
#include "proto/auth.h"
#include "proto/meet_for_test.h"
#include "proto/messages.h"
#include "testing/temp_dir.h"

namespace rdmacheck::proto {
namespace {

using namespace std::chrono_literals;

class AuthCert : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test_util::make_temp_dir("pki").string();
    const std::string make = std::string(RDMACHECK_FIXTURES) + "/../pki/make-test-pki " + dir_;
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
  }
  static std::string at(const std::string& name) { return dir_ + "/" + name; }
  static TlsCerts server(bool with_crl = true) {
    auto c = TlsCertContext::load(
        {at("server.pem"), at("server.key"), at("ca.pem"), with_crl ? at("crl.pem") : ""}, true);
    EXPECT_TRUE(c.ok()) << c.error().message();
    return c.ok() ? *c : nullptr;
  }
  static Psk client(const std::string& name, const std::string& ca = "ca.pem") {
    auto c = TlsCertContext::load({at(name + ".pem"), at(name + ".key"), at(ca), ""}, false);
    EXPECT_TRUE(c.ok()) << c.error().message();
    return Psk{at(name + ".pem"), "", "", c.ok() ? *c : nullptr};
  }
  static std::string dir_;
};
std::string AuthCert::dir_;

TEST_F(AuthCert, AClientOfTheCaIsAdmittedAsItsCnAndEveryFrameIsInsideTls13) {
  ServerKeys keys;
  keys.certs = server();
  for (const char* name : {"h1", "127.0.0.1"}) {  // a DNS name and an IP entry of its SAN
    const Meeting r = meet(keys, client("h2"), name);
    ASSERT_TRUE(r.client.ok()) << name << ": " << r.client.error().error.message();
    ASSERT_TRUE(r.server.ok()) << r.server.error().error.message();
    EXPECT_EQ(r.server->identity, "h2");
    EXPECT_EQ(r.server->log_name, "certificate h2, TLSv1.3 TLS_AES_128_GCM_SHA256");
    EXPECT_EQ(r.received.value("type", ""), "doctor-request") << r.received.dump();
  }
}

// --allow-identity: a certificate the CA signed, but of an identity the
// server does not list, is refused inside TLS with the server's reason (the
// client names it auth-not-allowed); a listed one is admitted.
TEST_F(AuthCert, AnIdentityOutsideTheServersListIsNotAdmitted) {
  ServerKeys keys;
  keys.certs = server();
  keys.identities = {"h7", "h9"};
  const Meeting out = meet(keys, client("h2"), "h1");
  ASSERT_FALSE(out.client.ok());
  EXPECT_EQ(out.client.error().kind, AuthFailure::kNotAllowed);
  EXPECT_NE(out.client.error().error.message().find(
                "this server's --allow-identity list does not include 'h2'"),
            std::string::npos)
      << out.client.error().error.message();
  ASSERT_FALSE(out.server.ok());
  EXPECT_EQ(out.server.error().kind, AuthFailure::kNotAllowed);
  keys.identities.push_back("h2");
  const Meeting in = meet(keys, client("h2"), "h1");
  ASSERT_TRUE(in.client.ok()) << in.client.error().error.message();
  ASSERT_TRUE(in.server.ok()) << in.server.error().error.message();
  EXPECT_EQ(in.server->identity, "h2");
}

// make-test-pki's certificates live two days: both ends are within
// kRenewDays, and the client names each with its date and who renews it.
TEST_F(AuthCert, TheClientNamesItsOwnAndTheServersCertificateNearTheirEnd) {
  ServerKeys keys;
  keys.certs = server();
  const Meeting r = meet(keys, client("h2"), "h1");
  ASSERT_TRUE(r.client.ok()) << r.client.error().error.message();
  ASSERT_EQ(r.client_expiring.size(), 2u);
  EXPECT_EQ(r.client_expiring[0].rfind(
                "this client's certificate " + at("h2.pem") + " (CN h2) expires ", 0),
            0u)
      << r.client_expiring[0];
  EXPECT_NE(r.client_expiring[0].find(" UTC, in 1 day: renew it here"), std::string::npos)
      << r.client_expiring[0];
  EXPECT_EQ(r.client_expiring[1].rfind("the server's certificate (CN h1) expires ", 0), 0u)
      << r.client_expiring[1];
  EXPECT_NE(r.client_expiring[1].find("renew it there (serve re-reads it on SIGHUP)"),
            std::string::npos)
      << r.client_expiring[1];
  // Keys instead of certificates: nothing expires.
  const Meeting plain = meet(ServerKeys{}, std::nullopt, "h1");
  ASSERT_TRUE(plain.client.ok()) << plain.client.error().error.message();
  EXPECT_TRUE(plain.client_expiring.empty());
}

TEST_F(AuthCert, AServerWhoseCertificateDoesNotNameTheHostDialledIsRefused) {
  ServerKeys keys;
  keys.certs = server();
  for (const char* name : {"h9", "198.18.0.9"}) {
    const Meeting r = meet(keys, client("h2"), name);
    ASSERT_FALSE(r.client.ok()) << name;
    EXPECT_EQ(r.client.error().kind, AuthFailure::kServerUnproven);
    EXPECT_NE(r.client.error().error.message().find(std::string("does not name '") + name + "'"),
              std::string::npos)
        << r.client.error().error.message();
    EXPECT_FALSE(r.server.ok());
  }
  // A client whose CA is not the server's CA: the server's chain does not verify.
  const Meeting other = meet(keys, client("h2", "other-ca.pem"), "h1");
  ASSERT_FALSE(other.client.ok());
  EXPECT_EQ(other.client.error().kind, AuthFailure::kServerUnproven);
  EXPECT_NE(other.client.error().error.message().find("does not verify against --tls-ca"),
            std::string::npos)
      << other.client.error().error.message();
}

TEST_F(AuthCert, ARevokedClientOrOneOfAnotherCaIsRefusedAndTheServerSaysWhy) {
  ServerKeys keys;
  keys.certs = server();
  const Meeting revoked = meet(keys, client("old"), "h1");
  ASSERT_FALSE(revoked.client.ok());
  EXPECT_EQ(revoked.client.error().kind, AuthFailure::kFailed);
  EXPECT_NE(revoked.client.error().error.message().find("refused this client's certificate"),
            std::string::npos)
      << revoked.client.error().error.message();
  ASSERT_FALSE(revoked.server.ok());
  EXPECT_EQ(revoked.server.error().kind, AuthFailure::kFailed);
  EXPECT_NE(revoked.server.error().error.message().find("certificate revoked"), std::string::npos)
      << revoked.server.error().error.message();
  // Without the CRL the same certificate is admitted: the CRL decided.
  ServerKeys no_crl;
  no_crl.certs = server(false);
  EXPECT_TRUE(meet(no_crl, client("old"), "h1").server.ok());
  const Meeting stranger = meet(keys, client("stranger"), "h1");
  ASSERT_FALSE(stranger.server.ok());
  EXPECT_NE(
      stranger.server.error().error.message().find("the client's certificate does not verify"),
      std::string::npos)
      << stranger.server.error().error.message();
}

TEST_F(AuthCert, KeysAndCertificatesDoNotMixAndEachSideSaysSo) {
  ServerKeys keys;
  keys.certs = server();
  const Meeting none = meet(keys, std::nullopt, "h1");
  ASSERT_FALSE(none.client.ok());
  EXPECT_EQ(none.client.error().kind, AuthFailure::kRequired);
  EXPECT_NE(none.client.error().error.message().find("--tls-cert, --tls-key and --tls-ca"),
            std::string::npos);
  auto ring = KeyRing::parse(ring_line("h2", "0123456789abcdefghijklmnopqrstuv"), "ring");
  ASSERT_TRUE(ring.ok());
  const ServerKeys ringed{{}, std::make_shared<const KeyRing>(std::move(*ring))};
  const Meeting mixed = meet(ringed, client("h2"), "h1");
  ASSERT_FALSE(mixed.client.ok());
  EXPECT_NE(mixed.client.error().error.message().find("the server takes pre-shared keys"),
            std::string::npos)
      << mixed.client.error().error.message();
}

TEST_F(AuthCert, AKeyThatIsNotTheCertificatesIsSaidAtLoad) {
  auto c = TlsCertContext::load({at("h2.pem"), at("old.key"), at("ca.pem"), ""}, false);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("is not the key of the certificate"), std::string::npos)
      << c.error().message();
  // A private key others may read is refused, as a key file is.
  const std::string open_key = at("open.key");
  ASSERT_EQ(
      std::system(("cp " + at("h2.key") + " " + open_key + " && chmod 644 " + open_key).c_str()),
      0);
  auto open = TlsCertContext::load({at("h2.pem"), open_key, at("ca.pem"), ""}, false);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message().find("(mode 0644): chmod 600"), std::string::npos)
      << open.error().message();
  auto missing = TlsCertContext::load({at("none.pem"), at("h2.key"), at("ca.pem"), ""}, false);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("none.pem"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::proto
