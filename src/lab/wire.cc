#include "lab/wire.h"

#include <fmt/core.h>

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
    // " Sent 1234 bytes 12 pkt (dropped 3, overlimits 0 requeues 0)"
    if (auto d = line.find("(dropped "); d != std::string::npos) {
      w.qdisc_dropped += std::strtoull(line.c_str() + d + 9, nullptr, 10);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return w;
}

std::string format_wire(const WireCounters& w) {
  std::string out = fmt::format(
      "lab: wire {}: sent {} frames onto the hub; towards it the hub dropped {} (queue full), "
      "queued at most {}, and {} more came before it was up",
      w.host, w.hub_from, w.hub_dropped_to, w.hub_max_queue, w.hub_unheard_to);
  if (w.guest) {
    out += fmt::format("; guest eth0 tx {} rx {} packets, qdisc dropped {}", w.guest->tx_packets,
                       w.guest->rx_packets, w.guest->qdisc_dropped);
  } else {
    out += "; the guest's own counters did not come back";
  }
  return out;
}

nlohmann::json to_json(const WireCounters& w) {
  nlohmann::json j = {{"host", w.host},
                      {"hub_from", w.hub_from},
                      {"hub_dropped_to", w.hub_dropped_to},
                      {"hub_unheard_to", w.hub_unheard_to},
                      {"hub_max_queue", w.hub_max_queue},
                      {"guest", nullptr}};
  if (w.guest) {
    j["guest"] = {{"tx_packets", w.guest->tx_packets},
                  {"rx_packets", w.guest->rx_packets},
                  {"qdisc_dropped", w.guest->qdisc_dropped}};
  }
  return j;
}

std::string collect_script() {
  // One sleep a second: cheap enough on an emulated CPU during the test.
  return R"SH(while [ ! -e $LAB/collect ]; do sleep 1; done
{ for c in tx_packets rx_packets; do echo "$c $(cat /sys/class/net/eth0/statistics/$c)"; done
  tc -s qdisc show dev eth0; } > $D/wire.tmp 2>&1
mv $D/wire.tmp $D/wire
)SH";
}

}  // namespace rdmacheck::lab
