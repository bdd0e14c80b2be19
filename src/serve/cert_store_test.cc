#include "serve/cert_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "testing/temp_dir.h"

namespace rdmacheck::serve {
namespace {

using std::chrono::hours;

// The certificates of tests/pki/make-test-pki (the openssl CLI) are valid
// for two days: a server on them is within kRenewDays of their end from the
// start, and its log says so.
TEST(CertStore, ACertificateNearItsEndIsSaidWithItsDateAndWhatToDo) {
  const auto dir = test_util::make_temp_dir("pki");
  const std::string make =
      std::string(RDMACHECK_FIXTURES) + "/../pki/make-test-pki " + dir.string();
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  auto store = CertStore::load({(dir / "server.pem").string(), (dir / "server.key").string(),
                                (dir / "ca.pem").string(), ""});
  ASSERT_TRUE(store.ok()) << store.error().message();
  const TlsCertContext& c = *(*store)->current();
  const auto now = std::chrono::system_clock::now();
  EXPECT_GT(c.not_after(), now + hours(24));
  EXPECT_LE(c.not_after(), now + hours(49));
  const auto note = expiry_note(c, now);
  ASSERT_TRUE(note);
  EXPECT_NE(note->find("certificate " + (dir / "server.pem").string() + " (CN h1) expires "),
            std::string::npos)
      << *note;
  EXPECT_NE(note->find(" UTC, in 1 day: renew it before then (SIGHUP re-reads it)"),
            std::string::npos)
      << *note;
  EXPECT_FALSE(expiry_note(c, c.not_after() - hours(24 * kRenewDays + 1)))
      << "more than 30 days left: nothing to say";
  EXPECT_NE(expiry_note(c, c.not_after() - hours(24 * kRenewDays - 1))->find("in 29 days"),
            std::string::npos);
  EXPECT_NE(expiry_note(c, c.not_after() - hours(5))->find("in less than a day"),
            std::string::npos);
  const auto ended = expiry_note(c, c.not_after() + hours(1));
  ASSERT_TRUE(ended);
  EXPECT_NE(ended->find("expired"), std::string::npos) << *ended;
  EXPECT_NE(ended->find("clients refuse it"), std::string::npos) << *ended;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::serve
