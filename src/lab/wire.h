// The lab's wire counters: what each guest sent onto the hub and what the
// hub dropped on the way to it, next to what the guest itself counted
// (netem drops frames inside the guest, before they reach the wire).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lab/shaper.h"

namespace rdmacheck::lab {

struct GuestWire {
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t qdisc_dropped = 0;  // tc -s qdisc: netem's loss and full queues
};

// Parses what the guest script writes at the end for one NIC: "tx_packets N"
// lines and the output of `tc -s qdisc show dev ethK`. nullopt when nothing is there.
std::optional<GuestWire> parse_guest_wire(const std::string& text);

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
};

// A stall this long is named in the wire report: a busy emulated guest still
// takes frames and sends some within a second.
inline constexpr double kGuestStallS = 2.0;

// "towards h2: 5230 frames, dropped 52 (loss 52), delayed 0, ..." for one
// direction of a port with switch faults.
std::string format_switch(const std::string& what, const ShaperCounters& c);

// "lab: wire h1: sent 5321 frames, hub dropped 0 towards it; in the guest: tx 5321 rx 5010
// packets, qdisc dropped 0"; on wire k > 1 the NIC is named as in /etc/hosts ("wire h1-2").
// A stall of kGuestStallS or more gets a line of its own ("lab: STALL h1: ...").
std::string format_wire(const WireCounters& w);
nlohmann::json to_json(const WireCounters& w);

// The guest script's last step: once $LAB/collect appears, write each
// NETDEV's counters to $D/wire.NETDEV, then $D/wire.done.
std::string collect_script(const std::vector<std::string>& netdevs);

}  // namespace rdmacheck::lab
