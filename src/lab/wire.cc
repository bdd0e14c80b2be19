#include "lab/wire.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <sstream>

namespace rdmacheck::lab {

std::optional<GuestWire> parse_guest_wire(const std::string& text) {
  GuestWire w;
  bool any = false;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string key;
    uint64_t v = 0;
    if (line.rfind("tx_packets ", 0) == 0 && (l >> key >> v)) {
      w.tx_packets = v;
      any = true;
    } else if (line.rfind("rx_packets ", 0) == 0 && (l >> key >> v)) {
      w.rx_packets = v;
      any = true;
    }
    if (line.rfind("tx_timeout ", 0) == 0 && (l >> key >> v)) {
      w.tx_timeouts += v;
      any = true;
    } else if (line.rfind("kernel ", 0) == 0) {
      w.kernel.push_back(line.substr(7));
    }
    // " Sent 1234 bytes 12 pkt (dropped 3, overlimits 0 requeues 0)"
    if (auto d = line.find("(dropped "); d != std::string::npos) {
      w.qdisc_dropped += std::strtoull(line.c_str() + d + 9, nullptr, 10);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return w;
}

std::string format_tx(const std::string& netdev, const VirtqStatus& tx) {
  std::string out = fmt::format(
      "QEMU's transmit queue of {}: the guest posted {}, QEMU took {} and completed {} (16-bit "
      "counters)",
      netdev, tx.avail, tx.last_avail, tx.used);
  if (tx.inuse > 0) {
    out += fmt::format("; QEMU holds {} frame{} it has not sent (its network backend)", tx.inuse,
                       tx.inuse == 1 ? "" : "s");
  }
  if (tx.waiting() > 0) {
    out += fmt::format("; {} posted frame{} wait{} untaken", tx.waiting(),
                       tx.waiting() == 1 ? "" : "s", tx.waiting() == 1 ? "s" : "");
  }
  return out;
}

namespace {

// Frames the guest posted that its QEMU has not sent (QMP at the lab's end).
bool qemu_holds_frames(const WireCounters& w) {
  return w.qemu_tx && (w.qemu_tx->inuse > 0 || w.qemu_tx->waiting() > 0);
}

}  // namespace

LabFault lab_fault(const WireCounters& w) {
  if (w.stall_s >= kGuestStallS) return LabFault::kStall;
  if (w.guest &&
      (w.guest->tx_timeouts > 0 || w.guest->tx_packets >= w.hub_from + kLostInQemuFrames)) {
    return LabFault::kTxStall;
  }
  if (w.mute.seconds >= kGuestStallS && qemu_holds_frames(w)) return LabFault::kTxStall;
  // A host whose peers had nothing to send it is never mute; its QEMU still
  // holds what the guest posted, and the hub has heard nothing from it.
  if (w.qemu_tx_held && w.silent_s >= kGuestStallS) return LabFault::kTxStall;
  return LabFault::kNone;
}

namespace {

// Why a transmit stall is one, from the guest's and its QEMU's own evidence.
std::string tx_stall_line(const std::string& port, const WireCounters& w) {
  std::vector<std::string> why;
  if (w.guest && w.guest->tx_timeouts > 0) {
    why.push_back(fmt::format(
        "its kernel's transmit watchdog fired {} time{} on {} (a send the emulated NIC never "
        "completed)",
        w.guest->tx_timeouts, w.guest->tx_timeouts == 1 ? "" : "s", w.netdev));
  }
  if (w.guest && w.guest->tx_packets >= w.hub_from + kLostInQemuFrames) {
    why.push_back(
        fmt::format("its NIC completed {} frames on {} and the hub got {} (lost "
                    "between its QEMU and the hub)",
                    w.guest->tx_packets, w.netdev, w.hub_from));
  }
  if (w.mute.seconds > 0) {
    why.push_back(
        fmt::format("it sent nothing for {:.1f} s from {:.1f} s into the lab while it "
                    "took {} frames",
                    w.mute.seconds, w.mute.from_s, w.mute.taken));
  }
  if (w.qemu_tx_held && w.silent_s >= kGuestStallS) {
    why.push_back(fmt::format(
        "it sent nothing for the last {:.1f} s of the lab, and its QEMU took none of the frames "
        "it had posted over {} ms",
        w.silent_s, kHeldLookMs));
  }
  if (w.qemu_tx) why.push_back(format_tx(w.netdev, *w.qemu_tx));
  std::string out = fmt::format("\nlab: TX STALL {}: {}", port, fmt::join(why, "; "));
  out +=
      ": the emulator's transmit path stopped, not the network; what a test says about that "
      "time is the lab's";
  if (w.guest) {
    for (const auto& k : w.guest->kernel) out += fmt::format("\nlab:   {} kernel: {}", port, k);
  }
  return out;
}

}  // namespace

std::string format_wire(const WireCounters& w) {
  std::string out = fmt::format(
      "lab: wire {}: sent {} frames onto the hub; towards it the hub dropped {} (queue full), "
      "queued at most {}, and {} more came before it was up",
      w.wire == 1 ? w.host : fmt::format("{}-{}", w.host, w.wire), w.hub_from, w.hub_dropped_to,
      w.hub_max_queue, w.hub_unheard_to);
  if (w.guest) {
    out += fmt::format("; guest {} tx {} rx {} packets, qdisc dropped {}", w.netdev,
                       w.guest->tx_packets, w.guest->rx_packets, w.guest->qdisc_dropped);
  } else {
    out += "; the guest's own counters did not come back";
  }
  const std::string port = w.wire == 1 ? w.host : fmt::format("{}-{}", w.host, w.wire);
  if (w.stall_s >= kGuestStallS) {
    out += fmt::format(
        "\nlab: STALL {}: its QEMU took no frame for {:.1f} s from {:.1f} s into the lab while "
        "frames waited for it, and it sent none: the guest stopped (its emulator got no CPU, or "
        "its kernel hung), not the network; what a test says about that time is the lab's",
        port, w.stall_s, w.stall_from_s);
  } else if (lab_fault(w) == LabFault::kTxStall) {
    out += tx_stall_line(port, w);
  }
  if (!w.switch_faults.empty()) {
    std::string faults;
    for (const auto& f : w.switch_faults) faults += (faults.empty() ? "" : ", ") + f;
    out += fmt::format("\nlab: switch port {} ({}): {}; {}", port, faults,
                       format_switch("towards " + port, w.switch_in),
                       format_switch("from " + port, w.switch_out));
  }
  return out;
}

std::string format_switch(const std::string& what, const ShaperCounters& c) {
  std::string out = fmt::format("{} {} frames", what, c.frames);
  std::string causes;
  const auto cause = [&](uint64_t n, const char* name) {
    if (n != 0) causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", name, n);
  };
  cause(c.lost, "loss");
  cause(c.flap_dropped, "port down");
  cause(c.size_dropped, "over the size limit");
  cause(c.rate_dropped, "rate cap's buffer full");
  out += fmt::format(", dropped {}{}", c.dropped(), causes.empty() ? "" : " (" + causes + ")");
  if (c.flaps != 0) out += fmt::format(", down {} times", c.flaps);
  if (c.delayed != 0) out += fmt::format(", delayed {}", c.delayed);
  if (c.reordered != 0) out += fmt::format(", held back {}", c.reordered);
  if (c.duplicated != 0) out += fmt::format(", duplicated {}", c.duplicated);
  if (c.corrupted != 0) out += fmt::format(", corrupted {}", c.corrupted);
  return out;
}

namespace {

nlohmann::json to_json(const ShaperCounters& c) {
  return {{"frames", c.frames},
          {"dropped", c.dropped()},
          {"lost", c.lost},
          {"flap_dropped", c.flap_dropped},
          {"flaps", c.flaps},
          {"size_dropped", c.size_dropped},
          {"rate_dropped", c.rate_dropped},
          {"delayed", c.delayed},
          {"reordered", c.reordered},
          {"duplicated", c.duplicated},
          {"corrupted", c.corrupted}};
}

}  // namespace

nlohmann::json to_json(const WireCounters& w) {
  nlohmann::json j = {
      {"host", w.host},
      {"wire", w.wire},
      {"netdev", w.netdev},
      {"hub_from", w.hub_from},
      {"hub_dropped_to", w.hub_dropped_to},
      {"hub_unheard_to", w.hub_unheard_to},
      {"hub_max_queue", w.hub_max_queue},
      {"hub_stall", {{"from_s", w.stall_from_s}, {"seconds", w.stall_s}}},
      {"hub_mute",
       {{"from_s", w.mute.from_s}, {"seconds", w.mute.seconds}, {"taken", w.mute.taken}}},
      {"hub_silent_s", w.silent_s},
      {"lab_fault", nullptr},
      {"qemu_tx", nullptr},
      {"guest", nullptr}};
  if (const auto f = lab_fault(w); f != LabFault::kNone) j["lab_fault"] = std::string(name_of(f));
  if (const auto& q = w.qemu_tx) {
    j["qemu_tx"] = {{"posted", q->avail},
                    {"taken", q->last_avail},
                    {"completed", q->used},
                    {"in_use", q->inuse},
                    {"held", w.qemu_tx_held}};
  }
  if (w.guest) {
    j["guest"] = {{"tx_packets", w.guest->tx_packets},
                  {"rx_packets", w.guest->rx_packets},
                  {"qdisc_dropped", w.guest->qdisc_dropped},
                  {"tx_timeouts", w.guest->tx_timeouts},
                  {"kernel", w.guest->kernel}};
  }
  j["switch"] = nullptr;
  if (!w.switch_faults.empty()) {
    j["switch"] = {
        {"faults", w.switch_faults}, {"in", to_json(w.switch_in)}, {"out", to_json(w.switch_out)}};
  }
  return j;
}

std::string collect_script(const std::vector<std::string>& netdevs) {
  std::string list;
  for (const auto& n : netdevs) list += (list.empty() ? "" : " ") + n;
  // One sleep a second: cheap enough on an emulated CPU during the test.
  return fmt::format(R"SH(while [ ! -e $LAB/collect ]; do sleep 1; done
for n in {}; do
  {{ for c in tx_packets rx_packets; do echo "$c $(cat /sys/class/net/$n/statistics/$c)"; done
    for q in /sys/class/net/$n/queues/tx-*; do echo "tx_timeout $(cat $q/tx_timeout)"; done
    dmesg | grep -iE "$n.*(watchdog|timed out|tx timeout)|watchdog.*$n" | tail -n 3 |
      sed 's/^/kernel /'
    tc -s qdisc show dev $n; }} > $D/wire.$n 2>&1
done
touch $D/wire.done
)SH",
                     list);
}

}  // namespace rdmacheck::lab
