// The InfiniBand reflection rule over neighbour entries as net/neighbour.h
// reads them (their IPoIB layout: net/neighbour_test.cc). The lab has no
// InfiniBand: this rule is proven here only; the RoCE rule and rdma_cm's are
// proven in the lab (AuthLab).
#include "serve/reflection.h"

#include <gtest/gtest.h>

namespace rdmacheck::serve {
namespace {

const char* kGid = "fe80:0000:0000:0000:0002:c903:000d:5f81";

Neighbour ipoib(uint8_t last) {
  Neighbour n;
  n.lladdr = {0x80, 0x00, 0x00, 0x48, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
              0x00, 0x00, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x0d, 0x5f, last};
  return n;
}

TEST(IbReflection, TheGidOfTheClientsIpoibEntryIsAccepted) {
  EXPECT_FALSE(ib_reflected(kGid, "192.168.10.2", ipoib(0x81)));
  // sysfs writes lower case; a client's text in upper case is the same GID.
  EXPECT_FALSE(
      ib_reflected("FE80:0000:0000:0000:0002:C903:000D:5F81", "192.168.10.2", ipoib(0x81)));
}

TEST(IbReflection, AnotherHostsGidIsRefusedWithTheOneTheEntryHolds) {
  const auto why = ib_reflected(kGid, "192.168.10.2", ipoib(0x99));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("the client's address 192.168.10.2 is GID "
                      "fe80:0000:0000:0000:0002:c903:000d:5f99 on IPoIB"),
            std::string::npos)
      << *why;
}

TEST(IbReflection, AClientNotOnIpoibCannotBeTiedToItsGidAndIsRefused) {
  // No entry at all (the control connection came over another network).
  auto why = ib_reflected(kGid, "10.0.0.2", std::nullopt);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("has no IPoIB neighbour entry here"), std::string::npos) << *why;
  EXPECT_NE(why->find("connect to this server's IPoIB address"), std::string::npos) << *why;
  // An Ethernet entry (6 bytes): the same.
  Neighbour eth;
  eth.lladdr = {0x52, 0x54, 0x00, 0x12, 0x34, 0x02};
  EXPECT_TRUE(ib_reflected(kGid, "10.0.0.2", eth));
  // An unresolved entry (no address): the same.
  EXPECT_TRUE(ib_reflected(kGid, "10.0.0.2", Neighbour{}));
  // The table could not be read: refused, saying why.
  why = ib_reflected(kGid, "10.0.0.2", std::nullopt, "netlink receive: no answer");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("could not read its neighbour table"), std::string::npos) << *why;
}

}  // namespace
}  // namespace rdmacheck::serve
