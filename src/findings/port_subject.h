#pragma once

#include <optional>
#include <string>

namespace rdmacheck {

// A finding's subject that names one port of one device ("mlx5_0/1"): the
// form doctor gives its port findings (state, GIDs, MTU, netdev, counters),
// on this host and, over the wire, on the peer. Other subjects name a host
// ("host"), a device ("mlx5_0") or a netdev ("eth0").
struct PortSubject {
  std::string device;
  int port = 0;  // 1..255, as verbs numbers ports

  [[nodiscard]] std::string text() const;
  friend bool operator==(const PortSubject&, const PortSubject&) = default;
};

// "DEVICE/PORT" for a finding about that port.
std::string port_subject(const std::string& device, int port);
// The port SUBJECT names, or nullopt when it names something else: one
// "/", a device name before it and a port number 1..255 after it.
std::optional<PortSubject> parse_port_subject(const std::string& subject);

}  // namespace rdmacheck
