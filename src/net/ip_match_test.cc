#include "net/ip_match.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

Ip16 ip(const std::string& s) {
  auto a = parse_ip(s);
  EXPECT_TRUE(a.has_value()) << s;
  return a.value_or(Ip16{});
}

bool allows(const std::string& cidr, const std::string& addr) {
  auto c = parse_cidr(cidr);
  EXPECT_TRUE(c.ok()) << cidr;
  return c && contains(*c, ip(addr));
}

TEST(IpMatch, IPv4AndItsMappedFormAreOneAddress) {
  EXPECT_EQ(ip("198.18.0.2"), ip("::ffff:198.18.0.2"));
  EXPECT_EQ(ip_text(ip("::ffff:198.18.0.2")), "198.18.0.2");
  EXPECT_EQ(ip_text(ip("fd00::1")), "fd00::1");
  EXPECT_EQ(ip("fe80::1%eth0"), ip("fe80::1"));
  EXPECT_FALSE(parse_ip("h1").has_value());
  EXPECT_FALSE(parse_ip("").has_value());
}

TEST(IpMatch, Ipv4Prefixes) {
  EXPECT_TRUE(allows("198.18.0.0/24", "198.18.0.2"));
  EXPECT_FALSE(allows("198.18.0.0/24", "198.18.1.2"));
  EXPECT_TRUE(allows("198.18.0.2", "198.18.0.2"));  // no prefix: one host
  EXPECT_FALSE(allows("198.18.0.2", "198.18.0.3"));
  EXPECT_TRUE(allows("198.18.0.2/32", "::ffff:198.18.0.2"));  // a v6 socket's view of v4
  EXPECT_TRUE(allows("10.1.2.3/8", "10.200.0.1"));            // host bits are ignored
  EXPECT_TRUE(allows("0.0.0.0/0", "203.0.113.9"));
  EXPECT_FALSE(allows("0.0.0.0/0", "fd00::1"));  // every IPv4 address, no IPv6 one
  EXPECT_TRUE(allows("198.18.0.0/23", "198.18.1.200"));
  EXPECT_FALSE(allows("198.18.0.0/23", "198.18.2.1"));
}

TEST(IpMatch, Ipv6PrefixesAndMappedRanges) {
  EXPECT_TRUE(allows("fd00::/8", "fd12:3456::1"));
  EXPECT_FALSE(allows("fd00::/8", "fe80::1"));
  EXPECT_TRUE(allows("fe80::/10", "febf::1"));
  EXPECT_FALSE(allows("fe80::/10", "fec0::1"));
  EXPECT_TRUE(allows("::ffff:198.18.0.0/120", "198.18.0.77"));
  EXPECT_TRUE(allows("::/0", "198.18.0.1"));  // all of IPv6 includes the mapped IPv4 range
}

TEST(IpMatch, BadAllowEntriesAreOneLineErrors) {
  for (const std::string bad : {"", "h1", "198.18.0.0/33", "fd00::/129", "198.18.0.0/", "1.2.3.4/x",
                                "1.2.3.4/-1", "fe80::1%eth0/64", "1.2.3/24"}) {
    auto c = parse_cidr(bad);
    ASSERT_FALSE(c.ok()) << bad;
    const std::string m = c.error().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_NE(m.find("--allow"), std::string::npos) << m;
  }
}

TEST(IpMatch, ListAllowsWhenAnyEntryDoes) {
  std::vector<Cidr> list = {*parse_cidr("10.0.0.0/8"), *parse_cidr("fd00::/8")};
  EXPECT_TRUE(allowed(list, ip("10.9.9.9")));
  EXPECT_TRUE(allowed(list, ip("fd00::9")));
  EXPECT_FALSE(allowed(list, ip("198.18.0.2")));
  EXPECT_FALSE(allowed({}, ip("10.9.9.9")));
}

// The reflection rule: a server's QP is only connected to its TCP peer's own GID.
TEST(IpMatch, GidIsThePeersAddressOrNothing) {
  const Ip16 peer4 = ip("198.18.0.2");
  EXPECT_TRUE(gid_is_address("0000:0000:0000:0000:0000:ffff:c612:0002", peer4));
  EXPECT_FALSE(gid_is_address("0000:0000:0000:0000:0000:ffff:c612:0003", peer4));  // h3
  // The peer's link-local IPv6 GID is not its IPv4 address.
  EXPECT_FALSE(gid_is_address("fe80:0000:0000:0000:5054:00ff:fe00:0002", peer4));
  const Ip16 peer6 = ip("fd00::2");
  EXPECT_TRUE(gid_is_address("fd00:0000:0000:0000:0000:0000:0000:0002", peer6));
  EXPECT_FALSE(gid_is_address("fd00:0000:0000:0000:0000:0000:0000:0003", peer6));
  EXPECT_FALSE(gid_is_address("", peer4));
  EXPECT_FALSE(gid_is_address("garbage", peer4));
}

}  // namespace
}  // namespace rdmacheck
