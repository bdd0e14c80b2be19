// Addresses as 16 bytes (IPv4 as its IPv4-mapped IPv6 form, ::ffff:a.b.c.d),
// the --allow lists of `serve` and the rule that a server's QP only talks to
// the host it talks to over TCP. Pure; tested in ip_match_test.cc.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck {

using Ip16 = std::array<uint8_t, 16>;

// "198.18.0.2", "fd00::1", "::ffff:198.18.0.2" (a "%scope" is ignored); nullopt otherwise.
std::optional<Ip16> parse_ip(const std::string& text);
// The address of an AF_INET or AF_INET6 socket address.
std::optional<Ip16> ip_of(const sockaddr* sa);
// An IPv4 address in its mapped form, and whether IP is one.
Ip16 mapped(const in_addr& a);
bool is_mapped(const Ip16& ip);
// IPv4 text for a mapped address, IPv6 text otherwise.
std::string ip_text(const Ip16& ip);

// One --allow entry: an address and how many leading bits must match.
struct Cidr {
  Ip16 net{};
  int bits = 128;  // over the 16-byte form: an IPv4 /24 is 96 + 24
  std::string text;
};

// "10.0.0.0/8", "fd00::/8", "198.18.0.2" (one host). One-line error otherwise.
Result<Cidr> parse_cidr(const std::string& text);
bool contains(const Cidr& c, const Ip16& ip);
// True when some entry of LIST contains IP.
bool allowed(const std::vector<Cidr>& list, const Ip16& ip);

// RoCE v2 GIDs are IP addresses: an IPv4 host's GID is ::ffff:a.b.c.d, an
// IPv6 host's is the address itself. True when GID_TEXT (sysfs form, 8 groups
// of 4 hex digits) is PEER's address.
bool gid_is_address(const std::string& gid_text, const Ip16& peer);

}  // namespace rdmacheck
