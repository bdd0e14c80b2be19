#include "doctor/ethtool.h"

#include <gtest/gtest.h>

#include <vector>

namespace rdmacheck::doctor {
namespace {

TEST(Ethtool, ModeSpeeds) {
  EXPECT_EQ(mode_speed_mbps("100000baseCR4/Full"), 100000u);
  EXPECT_EQ(mode_speed_mbps("10baseT/Half"), 10u);
  EXPECT_EQ(mode_speed_mbps("Autoneg"), 0u);
  EXPECT_EQ(fastest_mbps({"25000baseCR/Full", "100000baseSR4/Full", "10000baseKR/Full"}), 100000u);
  EXPECT_EQ(fastest_mbps({}), 0u);
}

TEST(Ethtool, ModeNamesFromBitmapWords) {
  std::vector<uint32_t> words(3, 0);
  auto set = [&](int bit) { words[bit / 32] |= 1u << (bit % 32); };
  set(ETHTOOL_LINK_MODE_1000baseT_Full_BIT);
  set(ETHTOOL_LINK_MODE_Autoneg_BIT);  // not a speed mode: left out
  set(ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT);
  EXPECT_EQ(mode_names(words), (std::vector<std::string>{"1000baseT/Full", "100000baseCR4/Full"}));
  // Bits beyond the words given are not read.
  EXPECT_TRUE(mode_names(std::span<const uint32_t>(words.data(), 1)).size() == 1);
}

TEST(Ethtool, DecodesWhatTheIoctlReturned) {
  ethtool_link_settings base{};
  base.speed = 25000;
  base.duplex = DUPLEX_FULL;
  base.autoneg = AUTONEG_ENABLE;
  base.port = PORT_DA;
  base.link_mode_masks_nwords = 3;
  std::vector<uint32_t> masks(9, 0);
  const int b100 = ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT;
  const int b25 = ETHTOOL_LINK_MODE_25000baseCR_Full_BIT;
  for (int w : {0, 3}) {  // supported and advertised: 25G and 100G
    masks[w + b100 / 32] |= 1u << (b100 % 32);
    masks[w + b25 / 32] |= 1u << (b25 % 32);
  }
  masks[6 + b25 / 32] |= 1u << (b25 % 32);  // the partner: 25G only
  const auto l = decode_link_settings(base, masks);
  ASSERT_TRUE(l.speed_mbps);
  EXPECT_EQ(*l.speed_mbps, 25000u);
  EXPECT_EQ(l.duplex, "full");
  EXPECT_TRUE(l.autoneg);
  EXPECT_EQ(l.port, "Direct Attach Copper");
  EXPECT_EQ(fastest_mbps(l.supported), 100000u);
  EXPECT_EQ(l.partner, std::vector<std::string>{"25000baseCR/Full"});
  // SPEED_UNKNOWN, as virtio and links without carrier report it.
  base.speed = static_cast<uint32_t>(SPEED_UNKNOWN);
  base.duplex = DUPLEX_UNKNOWN;
  EXPECT_FALSE(decode_link_settings(base, masks).speed_mbps);
  EXPECT_EQ(decode_link_settings(base, masks).duplex, "unknown");
}

TEST(Ethtool, JsonRoundTrip) {
  LinkSettings l;
  l.speed_mbps = 100000;
  l.duplex = "full";
  l.supported = {"100000baseCR4/Full"};
  const auto back = link_settings_from_json(to_json(l));
  EXPECT_EQ(back.speed_mbps, l.speed_mbps);
  EXPECT_EQ(back.supported, l.supported);
  EXPECT_FALSE(link_settings_from_json(to_json(LinkSettings{})).speed_mbps);
}

// The real ioctl on this machine's loopback: it has no link settings, and
// the failure comes back as a value with the errno, not a crash.
TEST(Ethtool, LoopbackHasNoLinkSettings) {
  const auto r = read_link_settings("lo");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().call, "ioctl(ETHTOOL_GLINKSETTINGS)");
  EXPECT_EQ(r.error().errnum, EOPNOTSUPP);
  EXPECT_FALSE(read_link_settings("no-such-netdev0").ok());
  EXPECT_FALSE(read_link_settings("").ok());
}

}  // namespace
}  // namespace rdmacheck::doctor
