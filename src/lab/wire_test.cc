#include "lab/wire.h"

#include <gtest/gtest.h>

namespace rdmacheck::lab {
namespace {

TEST(Wire, ParsesTheGuestsCountersAndNetemDrops) {
  const auto w = parse_guest_wire(
      "tx_packets 5321\nrx_packets 5010\n"
      "qdisc netem 8001: root refcnt 2 limit 1000 loss 3%\n"
      " Sent 412345 bytes 5321 pkt (dropped 161, overlimits 0 requeues 0)\n"
      " backlog 0b 0p requeues 0\n");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->tx_packets, 5321u);
  EXPECT_EQ(w->rx_packets, 5010u);
  EXPECT_EQ(w->qdisc_dropped, 161u);
  EXPECT_FALSE(parse_guest_wire(""));
}

TEST(Wire, OneLinePerHost) {
  WireCounters c{"h2", 1, "eth0", 100, 0, 2, 7, GuestWire{101, 99, 3}};
  EXPECT_EQ(
      format_wire(c),
      "lab: wire h2: sent 100 frames onto the hub; towards it the hub dropped 0 (queue full), "
      "queued at most 7, and 2 more came before it was up; guest eth0 tx 101 rx 99 packets, "
      "qdisc dropped 3");
  EXPECT_EQ(to_json(c)["guest"]["qdisc_dropped"], 3);
  c.guest.reset();
  EXPECT_NE(format_wire(c).find("did not come back"), std::string::npos);
}

// A stalled guest is named as the lab's, not the network's; a shorter pause is not.
TEST(Wire, AStalledGuestIsNamedOnItsOwnLine) {
  WireCounters c{"h1", 1, "eth0", 100, 0, 0, 4096, GuestWire{101, 99, 0}};
  c.stall_from_s = 31.04;
  c.stall_s = 6.25;
  EXPECT_NE(format_wire(c).find("\nlab: STALL h1: its QEMU took no frame for 6.2 s from 31.0 s "
                                "into the lab while frames waited for it, and it sent none"),
            std::string::npos)
      << format_wire(c);
  EXPECT_EQ(to_json(c)["hub_stall"]["seconds"], 6.25);
  c.stall_s = kGuestStallS - 0.1;
  EXPECT_EQ(format_wire(c).find("STALL"), std::string::npos);
}

// Every NIC of a host has its own row, named as in /etc/hosts; JSON keeps
// "host" and adds the wire and the netdev.
TEST(Wire, OneLinePerHostAndWire) {
  const WireCounters c{"h2", 2, "eth1", 10, 0, 0, 1, GuestWire{10, 9, 0}};
  EXPECT_EQ(format_wire(c).substr(0, 30), "lab: wire h2-2: sent 10 frames");
  EXPECT_NE(format_wire(c).find("guest eth1 tx 10 rx 9"), std::string::npos);
  const auto j = to_json(c);
  EXPECT_EQ(j["host"], "h2");
  EXPECT_EQ(j["wire"], 2);
  EXPECT_EQ(j["netdev"], "eth1");
  EXPECT_TRUE(j["switch"].is_null()) << "no switch fault on the port";
}

// A port with switch faults says what they did, per direction, by cause.
TEST(Wire, SwitchFaultsAreCountedPerDirectionAndCause) {
  WireCounters c{"h3", 1, "eth0", 10, 0, 0, 1, GuestWire{10, 9, 0}};
  c.switch_faults = {"switch-loss:5@h3", "--fault-at 10:switch-flap:1/5@h3:out"};
  c.switch_in.frames = 1000;
  c.switch_in.lost = 50;
  c.switch_out.frames = 900;
  c.switch_out.flap_dropped = 30;
  c.switch_out.flaps = 2;
  c.switch_out.lost = 45;
  EXPECT_NE(format_wire(c).find(
                "\nlab: switch port h3 (switch-loss:5@h3, --fault-at 10:switch-flap:1/5@h3:out): "
                "towards h3 1000 frames, dropped 50 (loss 50); from h3 900 frames, dropped 75 "
                "(loss 45, port down 30), down 2 times"),
            std::string::npos)
      << format_wire(c);
  const auto j = to_json(c);
  EXPECT_EQ(j["switch"]["faults"].size(), 2u);
  EXPECT_EQ(j["switch"]["in"]["lost"], 50);
  EXPECT_EQ(j["switch"]["out"]["dropped"], 75);
  EXPECT_EQ(j["switch"]["out"]["flaps"], 2);
}

}  // namespace
}  // namespace rdmacheck::lab
