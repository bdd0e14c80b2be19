// The lab's wire counters: what each guest sent onto the hub and what the
// hub dropped on the way to it, next to what the guest itself counted
// (netem drops frames inside the guest, before they reach the wire).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "lab/shaper.h"

namespace rdmacheck::lab {

struct GuestWire {
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t qdisc_dropped = 0;  // tc -s qdisc: netem's loss and full queues
  // The kernel's transmit watchdog: times a transmit queue of this NIC had
  // frames the NIC did not complete for the watchdog's timeout (sysfs
  // queues/tx-N/tx_timeout, summed), and its last lines in dmesg.
  uint64_t tx_timeouts = 0;
  std::vector<std::string> kernel;
};

// Parses what the guest script writes at the end for one NIC: "tx_packets N"
// lines and the output of `tc -s qdisc show dev ethK`. nullopt when nothing is there.
std::optional<GuestWire> parse_guest_wire(const std::string& text);

// One virtqueue as QEMU sees it. Indexes are free-running 16-bit counters.
struct VirtqStatus {
  // Buffers the guest posted: the avail ring's index in guest memory. QEMU's
  // shadow-avail-idx is its own copy, refreshed only when it looks at the
  // queue, so a QEMU that stopped looking shows everything taken.
  uint16_t avail = 0;
  uint16_t last_avail = 0;  // last-avail-idx: buffers QEMU took
  uint16_t used = 0;        // used-idx: buffers QEMU gave back
  uint32_t inuse = 0;       // taken, not yet given back (a TX frame QEMU could not send yet)
  // Posted by the guest and not yet taken by QEMU.
  [[nodiscard]] uint16_t waiting() const { return static_cast<uint16_t>(avail - last_avail); }
};

// "QEMU's transmit queue of eth0: the guest posted 20151, QEMU took 20151 and completed 20151"
std::string format_tx(const std::string& netdev, const VirtqStatus& tx);

struct WireCounters {
  std::string host;
  int wire = 1;                 // the lab's wire (NIC k of every host sits on wire k)
  std::string netdev = "eth0";  // the host's NIC on that wire
  uint64_t hub_from = 0;        // frames the hub received from this host
  uint64_t hub_dropped_to = 0;  // frames for this host the hub dropped (port buffer full)
  uint64_t hub_unheard_to = 0;  // frames for this host before its QEMU listened (boot)
  uint64_t hub_max_queue = 0;   // the deepest the hub's queue towards this host got
  std::optional<GuestWire> guest;
  // Every switch fault this host's port had (cleared ones too), and what they did: in is towards
  // the host, out is what it sent. Empty faults: the port had none.
  std::vector<std::string> switch_faults;
  ShaperCounters switch_in;
  ShaperCounters switch_out;
  // The longest time the host's QEMU took no frame from the hub while frames waited for it and it
  // sent none (Hub::longest_stall): seconds after the lab started, and how long.
  double stall_from_s = 0;
  double stall_s = 0;
  // The longest time the host sent nothing while its QEMU took frames from
  // the hub (Hub::longest_mute): from, how long, and how many it took.
  struct Mute {
    double from_s = 0;
    double seconds = 0;  // 0: never
    uint64_t taken = 0;
  } mute;
  // The NIC's transmit queue as its QEMU held it when the lab ended (QMP);
  // nullopt when QEMU did not say.
  std::optional<VirtqStatus> qemu_tx;
  // Two looks at that queue kHeldLookMs apart both found frames the guest
  // posted and QEMU had not taken, and QEMU took none in between.
  bool qemu_tx_held = false;
  // Seconds from the host's last frame onto the hub to the lab's end (Hub::silent_s).
  double silent_s = 0;
};

// The gap between the two looks at a transmit queue that holds frames: a
// QEMU that is only busy takes a posted frame well within it.
inline constexpr int kHeldLookMs = 250;

// Frames the guest's kernel counted as sent that never reached the hub: more
// than a few in flight means its emulated NIC held them.
inline constexpr uint64_t kLostInQemuFrames = 64;

// What the lab itself did wrong on this port, if anything: "stall" (the
// guest stopped: Hub::longest_stall of kGuestStallS or more), "tx-stall"
// (its transmit path stopped while it kept receiving: the kernel's transmit
// watchdog fired, frames it sent never reached the hub, or it was mute for
// kGuestStallS or more and QEMU still held frames the guest had posted), or
// none.
// Either makes what a test saw at that time the lab's, not the network's.
enum class LabFault { kNone, kStall, kTxStall };
LabFault lab_fault(const WireCounters& w);

// A stall this long is named in the wire report: a busy emulated guest still
// takes frames and sends some within a second.
inline constexpr double kGuestStallS = 2.0;

// "towards h2: 5230 frames, dropped 52 (loss 52), delayed 0, ..." for one
// direction of a port with switch faults.
std::string format_switch(const std::string& what, const ShaperCounters& c);

// "lab: wire h1: sent 5321 frames, hub dropped 0 towards it; in the guest: tx 5321 rx 5010
// packets, qdisc dropped 0"; on wire k > 1 the NIC is named as in /etc/hosts ("wire h1-2").
// A stall of kGuestStallS or more gets a line of its own ("lab: STALL h1: ..."), a transmit
// stall too ("lab: TX STALL h1: ...").
std::string format_wire(const WireCounters& w);
nlohmann::json to_json(const WireCounters& w);

// The guest script's last step: once $LAB/collect appears, write each
// NETDEV's counters to $D/wire.NETDEV, then $D/wire.done.
std::string collect_script(const std::vector<std::string>& netdevs);

}  // namespace rdmacheck::lab

namespace rdmacheck {
template <>
struct EnumNames<lab::LabFault> {
  static constexpr std::array<std::pair<lab::LabFault, std::string_view>, 3> table = {{
      {lab::LabFault::kNone, ""},
      {lab::LabFault::kStall, "stall"},
      {lab::LabFault::kTxStall, "tx-stall"},
  }};
};
}  // namespace rdmacheck
