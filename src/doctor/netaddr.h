// The IP addresses configured on the machine's netdevs (what `ip addr` shows),
// read with getifaddrs(3). The GID table check matches them against GIDs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::doctor {

struct NetAddress {
  std::string netdev;   // "eth0"
  int family = 4;       // 4 or 6
  std::string address;  // "198.18.0.1", "fe80::5054:ff:fe12:3401"
  int prefix_len = 0;   // 24
  [[nodiscard]] bool link_local() const { return address.rfind("fe80:", 0) == 0; }
};

// "198.18.0.0/24" for 198.18.0.1 with prefix 24; IPv6 likewise.
std::string subnet_of(const NetAddress& a);
// The number of leading one bits of a netmask, given as raw bytes.
int prefix_from_mask(const unsigned char* bytes, size_t len);

Result<std::vector<NetAddress>> read_addresses();

nlohmann::json to_json(const std::vector<NetAddress>& as);
std::vector<NetAddress> addresses_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::doctor
