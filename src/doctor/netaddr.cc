#include "doctor/netaddr.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <array>
#include <bit>
#include <memory>

namespace rdmacheck::doctor {

int prefix_from_mask(const unsigned char* bytes, size_t len) {
  int n = 0;
  for (size_t i = 0; i < len; ++i) n += std::popcount(static_cast<unsigned>(bytes[i]));
  return n;
}

std::string subnet_of(const NetAddress& a) {
  std::array<unsigned char, 16> raw{};
  const int af = a.family == 6 ? AF_INET6 : AF_INET;
  if (inet_pton(af, a.address.c_str(), raw.data()) != 1) return a.address;
  const size_t len = a.family == 6 ? 16 : 4;
  for (size_t i = 0; i < len; ++i) {
    const int keep = std::clamp(a.prefix_len - static_cast<int>(i) * 8, 0, 8);
    raw[i] &= static_cast<unsigned char>(0xff00u >> keep);
  }
  std::array<char, INET6_ADDRSTRLEN> buf{};
  inet_ntop(af, raw.data(), buf.data(), buf.size());
  return std::string(buf.data()) + "/" + std::to_string(a.prefix_len);
}

Result<std::vector<NetAddress>> read_addresses() {
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) return errno_error("getifaddrs");
  std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> list(raw, &::freeifaddrs);
  std::vector<NetAddress> out;
  for (const ifaddrs* i = raw; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    NetAddress a;
    a.netdev = i->ifa_name;
    std::array<char, INET6_ADDRSTRLEN> buf{};
    if (i->ifa_addr->sa_family == AF_INET) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      inet_ntop(AF_INET, &sin->sin_addr, buf.data(), buf.size());
      if (i->ifa_netmask != nullptr) {
        const auto* m = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask);
        a.prefix_len = prefix_from_mask(reinterpret_cast<const unsigned char*>(&m->sin_addr), 4);
      }
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      inet_ntop(AF_INET6, &sin6->sin6_addr, buf.data(), buf.size());
      a.family = 6;
      if (i->ifa_netmask != nullptr) {
        const auto* m = reinterpret_cast<const sockaddr_in6*>(i->ifa_netmask);
        a.prefix_len = prefix_from_mask(reinterpret_cast<const unsigned char*>(&m->sin6_addr), 16);
      }
    } else {
      continue;
    }
    a.address = buf.data();
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::json to_json(const std::vector<NetAddress>& as) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : as) {
    a.push_back({{"netdev", x.netdev},
                 {"family", x.family},
                 {"address", x.address},
                 {"prefix_len", x.prefix_len}});
  }
  return a;
}

std::vector<NetAddress> addresses_from_json(const nlohmann::json& j) {
  std::vector<NetAddress> out;
  if (!j.is_array()) return out;
  for (const auto& x : j) {
    out.push_back({x.value("netdev", ""), x.value("family", 4), x.value("address", ""),
                   x.value("prefix_len", 0)});
  }
  return out;
}

}  // namespace rdmacheck::doctor
