#include "monitor/peers.h"

#include <fmt/core.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace rdmacheck::monitor {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::optional<uint16_t> port_of(const std::string& text) {
  unsigned v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v == 0 || v > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(v);
}

// One entry: "host", "host:port", "[v6]" or "[v6]:port"; a bare IPv6
// address (two colons or more) has no port.
Result<Peer> parse_entry(const std::string& e, uint16_t default_port) {
  Peer p;
  p.port = default_port;
  std::string port_text;
  if (e.front() == '[') {
    const auto close = e.find(']');
    if (close == std::string::npos) return plain_error("peer", "'[' without ']'");
    p.host = e.substr(1, close - 1);
    const std::string rest = e.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return plain_error("peer", "after ']' only :PORT may follow");
      port_text = rest.substr(1);
    }
  } else if (std::count(e.begin(), e.end(), ':') == 1) {
    p.host = e.substr(0, e.find(':'));
    port_text = e.substr(e.find(':') + 1);
  } else {
    p.host = e;
  }
  if (p.host.empty()) return plain_error("peer", "no host before the port");
  if (!port_text.empty() || e.back() == ':') {
    const auto port = port_of(port_text);
    if (!port) return plain_error("peer", fmt::format("'{}' is not a port (1-65535)", port_text));
    p.port = *port;
  }
  const bool v6 = p.host.find(':') != std::string::npos;
  p.name = p.port == default_port ? p.host
           : v6                   ? fmt::format("[{}]:{}", p.host, p.port)
                                  : fmt::format("{}:{}", p.host, p.port);
  return p;
}

}  // namespace

Result<std::vector<Peer>> parse_peers(const std::string& text, uint16_t default_port,
                                      const std::string& where) {
  std::vector<Peer> peers;
  std::set<std::string> seen;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trimmed(line);
    if (line.empty()) continue;
    if (line.find_first_of(" \t") != std::string::npos) {
      return plain_error(fmt::format("{} line {}", where, n),
                         fmt::format("'{}': one host or address per line", line));
    }
    auto p = parse_entry(line, default_port);
    if (!p) {
      return plain_error(fmt::format("{} line {}", where, n),
                         fmt::format("'{}': {}", line, p.error().context));
    }
    if (seen.insert(p->name).second) peers.push_back(std::move(*p));
  }
  return peers;
}

Result<std::vector<Peer>> load_peers(const std::string& path, uint16_t default_port) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return errno_error("read", path);
  auto peers = parse_peers(ss.str(), default_port, path);
  if (peers && peers->empty()) {
    return plain_error(path, "no peer in it (one host or address per line)");
  }
  return peers;
}

std::vector<Peer> without_self(std::vector<Peer> peers, const std::vector<std::string>& names,
                               const std::vector<std::string>& addresses) {
  const auto is_self = [&](const Peer& p) {
    return std::find(names.begin(), names.end(), p.host) != names.end() ||
           std::find(addresses.begin(), addresses.end(), p.host) != addresses.end();
  };
  peers.erase(std::remove_if(peers.begin(), peers.end(), is_self), peers.end());
  return peers;
}

std::vector<std::string> self_names() {
  std::array<char, 256> buf{};
  if (::gethostname(buf.data(), buf.size() - 1) != 0) return {};
  const std::string full(buf.data());
  std::vector<std::string> v{full};
  if (const auto dot = full.find('.'); dot != std::string::npos && dot > 0) {
    v.push_back(full.substr(0, dot));
  }
  return v;
}

std::vector<std::string> self_addresses() {
  std::vector<std::string> v;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return v;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    const int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    std::array<char, NI_MAXHOST> host{};
    const socklen_t len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (::getnameinfo(a->ifa_addr, len, host.data(), host.size(), nullptr, 0, NI_NUMERICHOST) ==
        0) {
      std::string h(host.data());
      if (const auto pct = h.find('%'); pct != std::string::npos) h.resize(pct);  // fe80::1%eth0
      v.push_back(h);
    }
  }
  ::freeifaddrs(list);
  return v;
}

}  // namespace rdmacheck::monitor
