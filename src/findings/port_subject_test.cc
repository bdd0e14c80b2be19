#include "findings/port_subject.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

// The subjects doctor writes (doctor/port.cc, gid.cc, mtu.cc, netdev.cc,
// counters.cc name a port; presence.cc, pcie.cc, lossless.cc a host, a device
// or a netdev), and what a peer's report could carry instead.
TEST(PortSubject, OnlyDeviceSlashPortNamesAPort) {
  EXPECT_EQ(parse_port_subject("mlx5_0/1"), (PortSubject{"mlx5_0", 1}));
  EXPECT_EQ(parse_port_subject("rxe0/255"), (PortSubject{"rxe0", 255}));
  EXPECT_EQ(parse_port_subject(port_subject("mlx4_0", 2)), (PortSubject{"mlx4_0", 2}));
  EXPECT_EQ((PortSubject{"rxe1", 1}).text(), "rxe1/1");
  for (const char* other : {"host", "mlx5_0", "eth0", "", "/1", "mlx5_0/", "mlx5_0/0", "mlx5_0/256",
                            "mlx5_0/1/2", "mlx5_0/x", "mlx5_0/-1", "mlx5_0/0001", "10.0.0.0/24x"}) {
    EXPECT_EQ(parse_port_subject(other), std::nullopt) << other;
  }
}

}  // namespace
}  // namespace rdmacheck
