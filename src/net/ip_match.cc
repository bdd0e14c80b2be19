#include "net/ip_match.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace rdmacheck {

Ip16 mapped(const in_addr& a) {
  Ip16 ip{};
  ip[10] = 0xff;
  ip[11] = 0xff;
  std::memcpy(&ip[12], &a, 4);
  return ip;
}

bool is_mapped(const Ip16& ip) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(ip.data(), kPrefix, sizeof kPrefix) == 0;
}

std::optional<Ip16> parse_ip(const std::string& text) {
  const std::string addr = text.substr(0, text.find('%'));
  in_addr v4{};
  if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) return mapped(v4);
  Ip16 ip{};
  if (inet_pton(AF_INET6, addr.c_str(), ip.data()) == 1) return ip;
  return std::nullopt;
}

std::optional<Ip16> ip_of(const sockaddr* sa) {
  if (sa == nullptr) return std::nullopt;
  if (sa->sa_family == AF_INET) return mapped(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
  if (sa->sa_family == AF_INET6) {
    Ip16 ip{};
    std::memcpy(ip.data(), &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
    return ip;
  }
  return std::nullopt;
}

std::string ip_text(const Ip16& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_mapped(ip)) {
    inet_ntop(AF_INET, &ip[12], buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, ip.data(), buf, sizeof buf);
  }
  return buf;
}

Result<Cidr> parse_cidr(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return plain_error("--allow", fmt::format("'{}': {}; expected ADDRESS[/PREFIX], e.g. "
                                              "10.0.0.0/8, 198.18.0.2 or fd00::/8",
                                              text, why));
  };
  const auto slash = text.find('/');
  const std::string addr = text.substr(0, slash);
  if (addr.find('%') != std::string::npos) return bad("no %scope in an allow-list");
  auto ip = parse_ip(addr);
  if (!ip) return bad("not an IPv4 or IPv6 address");
  const bool v4 = addr.find(':') == std::string::npos;
  const int max_bits = v4 ? 32 : 128;
  int bits = max_bits;
  if (slash != std::string::npos) {
    const std::string p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 || p.find_first_not_of("0123456789") != std::string::npos) {
      return bad("the prefix is not a number");
    }
    bits = std::stoi(p);
    if (bits > max_bits) return bad(fmt::format("the prefix is over {}", max_bits));
  }
  Cidr c;
  c.bits = v4 ? 96 + bits : bits;
  c.text = text;
  // The network part only, so that 10.1.2.3/8 means 10.0.0.0/8.
  for (int i = 0; i < 16; ++i) {
    const int keep = std::clamp(c.bits - i * 8, 0, 8);
    c.net[i] = static_cast<uint8_t>((*ip)[i] & static_cast<uint8_t>(0xff00 >> keep));
  }
  return c;
}

bool contains(const Cidr& c, const Ip16& ip) {
  for (int i = 0; i < 16; ++i) {
    const int keep = std::clamp(c.bits - i * 8, 0, 8);
    const auto mask = static_cast<uint8_t>(0xff00 >> keep);
    if ((ip[i] & mask) != c.net[i]) return false;
  }
  return true;
}

bool allowed(const std::vector<Cidr>& list, const Ip16& ip) {
  for (const auto& c : list) {
    if (contains(c, ip)) return true;
  }
  return false;
}

bool gid_is_address(const std::string& gid_text, const Ip16& peer) {
  Ip16 gid{};
  if (inet_pton(AF_INET6, gid_text.c_str(), gid.data()) != 1) return false;
  return gid == peer;
}

}  // namespace rdmacheck
