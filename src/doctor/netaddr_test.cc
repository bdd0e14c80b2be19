#include "doctor/netaddr.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rdmacheck::doctor {
namespace {

TEST(NetAddr, PrefixFromMask) {
  const unsigned char m24[4] = {255, 255, 255, 0};
  const unsigned char m64[16] = {255, 255, 255, 255, 255, 255, 255, 255};
  EXPECT_EQ(prefix_from_mask(m24, 4), 24);
  EXPECT_EQ(prefix_from_mask(m64, 16), 64);
}

TEST(NetAddr, Subnets) {
  EXPECT_EQ(subnet_of({"eth0", 4, "198.18.0.1", 24}), "198.18.0.0/24");
  EXPECT_EQ(subnet_of({"eth0", 4, "10.1.2.3", 20}), "10.1.0.0/20");
  EXPECT_EQ(subnet_of({"eth0", 6, "fd00::2", 64}), "fd00::/64");
  EXPECT_TRUE((NetAddress{"eth0", 6, "fe80::1", 64}.link_local()));
}

TEST(NetAddr, JsonRoundTrip) {
  const std::vector<NetAddress> in = {{"eth0", 4, "198.18.0.1", 24}, {"eth0", 6, "fe80::1", 64}};
  const auto out = addresses_from_json(to_json(in));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].address, "fe80::1");
  EXPECT_EQ(out[1].family, 6);
  EXPECT_EQ(out[0].prefix_len, 24);
}

// getifaddrs on this machine: loopback is always there.
TEST(NetAddr, ReadsThisMachinesLoopback) {
  const auto r = read_addresses();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(std::any_of(r->begin(), r->end(), [](const NetAddress& a) {
    return a.netdev == "lo" && a.address == "127.0.0.1" && a.prefix_len == 8;
  }));
}

}  // namespace
}  // namespace rdmacheck::doctor
