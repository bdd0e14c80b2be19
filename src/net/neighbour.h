// This host's neighbour table (ARP for IPv4, neighbour discovery for IPv6),
// read over rtnetlink as `ip neigh show` does: /proc/net/arp cuts an IPoIB
// hardware address short (it shows 9 of its 20 bytes). serve ties an
// InfiniBand client's GID to its TCP address with it (serve/reflection.h).
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/ip_match.h"

namespace rdmacheck {

struct Neighbour {
  Ip16 ip{};
  int ifindex = 0;
  uint16_t state = 0;           // NUD_* (linux/neighbour.h)
  std::vector<uint8_t> lladdr;  // empty while unresolved (incomplete, failed)
};

// One RTM_NEWNEIGH message (rtnetlink(7): struct ndmsg, then NDA_DST and
// NDA_LLADDR); nullopt for a message of another type or without a
// destination.
std::optional<Neighbour> parse_neigh_message(const nlmsghdr* nlh);

// This host's entry for IP with a link-layer address (reachable, stale,
// delay, probe, permanent, noarp), or nullopt when it has none.
Result<std::optional<Neighbour>> neighbour_of(const Ip16& ip);

// The port GID in an IPoIB hardware address (RFC 4391 9.1.1; RHEL's
// "Understanding IPoIB hardware addresses": one reserved byte and the 3-byte
// UD QP number, then the 16-byte GID: subnet prefix and port GUID), as sysfs
// writes a GID ("fe80:0000:0000:0000:0002:c903:000d:5f81"); nullopt when
// LLADDR is not 20 bytes (not InfiniBand).
std::optional<std::string> ipoib_gid(const std::vector<uint8_t>& lladdr);

}  // namespace rdmacheck
