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

// The guest's transmit watchdog and its dmesg lines come back with its counters.
TEST(Wire, ParsesTheTransmitWatchdog) {
  // Layout as the collect script writes it on Debian 12's 6.1 kernel: one
  // tx_timeout per queue (sysfs queues/tx-N/tx_timeout), then the kernel's
  // lines (net/sched/sch_generic.c's "NETDEV WATCHDOG" message).
  const auto w = parse_guest_wire(
      "tx_packets 760\nrx_packets 32385\ntx_timeout 2\ntx_timeout 0\n"
      "kernel [  312.40] NETDEV WATCHDOG: eth0 (virtio_net): transmit queue 0 timed out\n"
      "qdisc pfifo_fast 0: root refcnt 2 bands 3\n"
      " Sent 1000 bytes 760 pkt (dropped 0, overlimits 0 requeues 4)\n");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->tx_timeouts, 2u);
  ASSERT_EQ(w->kernel.size(), 1u);
  EXPECT_EQ(w->kernel[0].substr(0, 10), "[  312.40]");
}

// A transmit stall is the lab's: named when the guest's watchdog fired or
// its frames did not reach the hub; a silent receiver (UC, UD) alone is not.
TEST(Wire, ATransmitStallIsNamedOnlyFromTheGuestsOwnEvidence) {
  WireCounters c{"h1", 1, "eth0", 760, 0, 0, 12, GuestWire{760, 32385, 0}};
  c.mute.from_s = 40.1;
  c.mute.seconds = 22.5;
  c.mute.taken = 31000;
  EXPECT_EQ(lab_fault(c), LabFault::kNone) << "a receiver of UC or UD writes is silent by design";
  EXPECT_EQ(format_wire(c).find("STALL"), std::string::npos);
  EXPECT_TRUE(to_json(c)["lab_fault"].is_null());
  EXPECT_EQ(to_json(c)["hub_mute"]["taken"], 31000);

  c.guest->tx_timeouts = 1;
  c.guest->kernel = {"[  312.40] NETDEV WATCHDOG: eth0 (virtio_net): transmit queue 0 timed out"};
  EXPECT_EQ(lab_fault(c), LabFault::kTxStall);
  const auto text = format_wire(c);
  EXPECT_NE(text.find("\nlab: TX STALL h1: its kernel's transmit watchdog fired 1 time on eth0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("it sent nothing for 22.5 s from 40.1 s into the lab while it took 31000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nlab:   h1 kernel: [  312.40] NETDEV WATCHDOG"), std::string::npos) << text;
  EXPECT_EQ(to_json(c)["lab_fault"], "tx-stall");

  c.guest->tx_timeouts = 0;
  c.guest->kernel.clear();
  c.guest->tx_packets = 760 + kLostInQemuFrames;
  EXPECT_EQ(lab_fault(c), LabFault::kTxStall);
  EXPECT_NE(format_wire(c).find("its NIC completed 824 frames on eth0 and the hub got 760 (lost "
                                "between its QEMU and the hub)"),
            std::string::npos)
      << format_wire(c);
  c.guest->tx_packets = 770;  // a few in flight when the counters were read
  EXPECT_EQ(lab_fault(c), LabFault::kNone);
  c.stall_s = kGuestStallS;
  EXPECT_EQ(lab_fault(c), LabFault::kStall);
}

// QEMU's own queue at the lab's end: a guest mute for 2 s or more while QEMU
// still holds frames it posted is a transmit stall, and the line says where
// the frames are; an idle queue (all taken and completed) leaves a mute guest alone.
TEST(Wire, AMuteGuestWhoseQemuHoldsItsFramesIsATransmitStall) {
  WireCounters c{"h1", 1, "eth0", 760, 0, 0, 12, GuestWire{760, 32385, 0}};
  c.mute = {40.1, 22.5, 31000};
  c.qemu_tx = VirtqStatus{1016, 760, 759, 1};
  EXPECT_EQ(lab_fault(c), LabFault::kTxStall);
  const auto text = format_wire(c);
  EXPECT_NE(text.find("\nlab: TX STALL h1: it sent nothing for 22.5 s from 40.1 s into the lab "
                      "while it took 31000 frames; QEMU's transmit queue of eth0: the guest "
                      "posted 1016, QEMU took 760 and completed 759 (16-bit counters); QEMU holds "
                      "1 frame it has not sent (its network backend); 256 posted frames wait "
                      "untaken: the emulator's transmit path stopped"),
            std::string::npos)
      << text;
  const auto j = to_json(c);
  EXPECT_EQ(
      j["qemu_tx"],
      (nlohmann::json{
          {"posted", 1016}, {"taken", 760}, {"completed", 759}, {"in_use", 1}, {"held", false}}));
  c.qemu_tx = VirtqStatus{1016, 1016, 1016, 0};
  EXPECT_EQ(lab_fault(c), LabFault::kNone) << "a UD receiver is mute by design and its queue idles";
  c.qemu_tx = VirtqStatus{1016, 760, 759, 1};
  c.mute.seconds = kGuestStallS / 2;
  EXPECT_EQ(lab_fault(c), LabFault::kNone) << "a frame in flight in a short silence is no stall";
  c.qemu_tx.reset();
  EXPECT_TRUE(to_json(c)["qemu_tx"].is_null());
}

// A stall the mute rule cannot see: the client's QEMU stopped taking its
// frames in the middle of a perftest run, so its server had nothing more to
// send it, and the lab ended at its deadline with no guest counters. The
// figures are the ones QMP showed on h2 in that lab (bench/perf, 2026-12-07:
// QEMU took 54972, the guest's avail ring said 55041, in use 0, for minutes).
TEST(Wire, AHostThatFellSilentWhileItsQemuHeldItsFramesIsATransmitStall) {
  WireCounters c{"h2", 1, "eth0", 54972, 0, 0, 21, std::nullopt};
  c.qemu_tx = VirtqStatus{55041, 54972, 54972, 0};
  c.silent_s = 1000.2;
  EXPECT_EQ(lab_fault(c), LabFault::kNone) << "one look: QEMU may be about to take them";
  c.qemu_tx_held = true;
  EXPECT_EQ(lab_fault(c), LabFault::kTxStall);
  const auto text = format_wire(c);
  EXPECT_NE(text.find("\nlab: TX STALL h2: it sent nothing for the last 1000.2 s of the lab, and "
                      "its QEMU took none of the frames it had posted over 250 ms; QEMU's "
                      "transmit queue of eth0: the guest posted 55041, QEMU took 54972"),
            std::string::npos)
      << text;
  const auto j = to_json(c);
  EXPECT_EQ(j["lab_fault"], "tx-stall");
  EXPECT_EQ(j["qemu_tx"]["held"], true);
  EXPECT_DOUBLE_EQ(j["hub_silent_s"].get<double>(), 1000.2);
  c.silent_s = kGuestStallS / 2;
  EXPECT_EQ(lab_fault(c), LabFault::kNone) << "frames held in a short silence are no stall";
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
