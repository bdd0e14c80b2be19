#include "proto/key_ring.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace rdmacheck::proto {
namespace {

// 32 bytes with 32 distinct values, as keygen's random bytes would have.
std::string random_like(char first) {
  std::string k;
  for (int i = 0; i < 32; ++i) k.push_back(static_cast<char>(first + i * 7));
  return k;
}

TEST(KeyRing, OneKeyPerIdentityCommentsAndBlankLines) {
  const std::string k2 = random_like(1);
  const std::string k3 = random_like(2);
  const std::string text = "# the fleet's clients\n\n" + ring_line("h2", k2) + "  # h3 joined\r\n" +
                           ring_line("root@h3.example", k3);
  auto ring = KeyRing::parse(text, "ring");
  ASSERT_TRUE(ring.ok()) << ring.error().message();
  EXPECT_EQ(ring->size(), 2u);
  EXPECT_EQ(ring->find("h2"), k2);
  EXPECT_EQ(ring->find("root@h3.example"), k3);
  EXPECT_EQ(ring->find("h4"), std::nullopt) << "unknown, or revoked by removing its line";
  EXPECT_EQ(ring->only(), std::nullopt) << "a ring of two is no client file";
  auto client = KeyRing::parse(ring_line("h2", k2), "client");
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->only());
  EXPECT_EQ(client->only()->first, "h2");
  EXPECT_EQ(client->only()->second, k2);
}

TEST(KeyRing, WeakKeysAndBadLinesAreRefusedWithTheirLine) {
  const auto refused = [](const std::string& text) {
    auto r = KeyRing::parse(text, "ring");
    return r.ok() ? std::string("(accepted)") : r.error().message();
  };
  const std::string good = ring_line("h2", random_like(1));
  EXPECT_NE(refused(good + ring_line("h3", std::string(16, 'k')))
                .find("ring:2: the key of 'h3' is too weak: 16 bytes"),
            std::string::npos);
  EXPECT_NE(refused(ring_line("h3", std::string(32, 'a'))).find("only 1 distinct byte values"),
            std::string::npos)
      << "a typed aaaa... key is crackable offline from one recorded handshake";
  EXPECT_NE(refused("h2 00112233zz\n").find("not hex digits"), std::string::npos);
  EXPECT_NE(refused("h2 001\n").find("not hex digits"), std::string::npos);
  EXPECT_NE(refused("h2\n").find("ring:1: a line is 'IDENTITY KEY'"), std::string::npos);
  EXPECT_NE(refused(good + "h4 aa bb\n").find("ring:2: more than"), std::string::npos);
  EXPECT_NE(refused(good + good).find("identity 'h2' has a second key"), std::string::npos);
  EXPECT_NE(refused(ring_line("../h2", random_like(1))).find("is not a host name"),
            std::string::npos);
  EXPECT_NE(refused("# nothing\n\n").find("holds no key"), std::string::npos);
  EXPECT_EQ(weak_key(random_like(3)), std::nullopt);
}

TEST(KeyRing, AFileOthersCanReadIsRefusedUnlessSystemdHandedItOver) {
  const auto dir = test_util::make_temp_dir("ring");
  const auto file = (dir / "ring").string();
  std::ofstream(file) << ring_line("h2", random_like(1));
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  auto r = KeyRing::load(file);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("mode 0640): chmod 600"), std::string::npos)
      << r.error().message();
  // systemd's credentials directory: it sets the mode (0440 with an ACL).
  ASSERT_EQ(::setenv("CREDENTIALS_DIRECTORY", dir.c_str(), 1), 0);
  auto handed = KeyRing::load(file);
  ::unsetenv("CREDENTIALS_DIRECTORY");
  ASSERT_TRUE(handed.ok()) << handed.error().message();
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  auto mine = KeyRing::load(file);
  ASSERT_TRUE(mine.ok()) << mine.error().message();
  EXPECT_EQ(mine->size(), 1u);
  auto not_a_file = KeyRing::load(dir.string());
  ASSERT_FALSE(not_a_file.ok());
  EXPECT_NE(not_a_file.error().message().find("is not a file"), std::string::npos);
  auto missing = KeyRing::load((dir / "none").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().errnum, ENOENT);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::proto
