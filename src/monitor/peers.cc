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

Result<std::vector<Peer>> parse_hostfile(const std::string& text, uint16_t default_port,
                                         const std::string& where) {
  // Each line's host alone, as a peer list; its settings checked here.
  std::string hosts;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string host;
    words >> host;
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos || eq == 0) {
        return plain_error(fmt::format("{} line {}", where, n),
                           fmt::format("'{}' after the host: a hostfile line is 'HOST "
                                       "[slots=N] [max_slots=N]'",
                                       w));
      }
    }
    hosts += host + "\n";  // a blank line stays one, so the line numbers hold
  }
  return parse_peers(hosts, default_port, where);
}

namespace {

// One bracket's items ("01-03,7"): the names they give, zero padding kept.
Result<std::vector<std::string>> bracket_items(const std::string& inside) {
  std::vector<std::string> out;
  std::istringstream in(inside);
  for (std::string item; std::getline(in, item, ',');) {
    const auto dash = item.find('-');
    const std::string lo = item.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : item.substr(dash + 1);
    auto number = [](const std::string& s) -> std::optional<uint64_t> {
      uint64_t v = 0;
      const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (s.empty() || s.size() > 9 || ec != std::errc() || p != s.data() + s.size()) {
        return std::nullopt;
      }
      return v;
    };
    const auto a = number(lo);
    const auto b = number(hi);
    if (!a || !b || *b < *a) {
      return plain_error("host list", fmt::format("'[{}]': '{}' is not N or N-M", inside, item));
    }
    if (*b - *a >= kMaxPeers)
      return plain_error("host list", fmt::format("'{}' is too long", item));
    for (uint64_t v = *a; v <= *b; ++v) out.push_back(fmt::format("{:0{}}", v, lo.size()));
  }
  return out;
}

// The names one entry ("r[1-2]-n[01-02]") gives.
Result<std::vector<std::string>> expand_entry(const std::string& e) {
  std::vector<std::string> names = {""};
  for (size_t i = 0; i < e.size();) {
    if (e[i] == ']') return plain_error("host list", fmt::format("'{}': ']' without '['", e));
    if (e[i] != '[') {
      const size_t j = std::min(e.find('[', i), e.find(']', i));
      const std::string lit = e.substr(i, j == std::string::npos ? std::string::npos : j - i);
      for (auto& n : names) n += lit;
      i += lit.size();
      continue;
    }
    const auto close = e.find(']', i);
    if (close == std::string::npos) {
      return plain_error("host list", fmt::format("'{}': '[' without ']'", e));
    }
    auto items = bracket_items(e.substr(i + 1, close - i - 1));
    if (!items) return items.error();
    if (names.size() * items->size() > kMaxPeers) {
      return plain_error("host list", fmt::format("'{}' names more than {} hosts", e, kMaxPeers));
    }
    std::vector<std::string> next;
    next.reserve(names.size() * items->size());
    for (const auto& n : names) {
      for (const auto& it : *items) next.push_back(n + it);
    }
    names = std::move(next);
    i = close + 1;
  }
  return names;
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  std::string entry;
  int depth = 0;
  auto flush = [&]() -> Status {
    const std::string e = trimmed(entry);
    entry.clear();
    if (e.empty()) return ok_status();
    auto names = expand_entry(e);
    if (!names) return names.error();
    if (out.size() + names->size() > kMaxPeers) {
      return plain_error("host list", fmt::format("more than {} hosts", kMaxPeers));
    }
    out.insert(out.end(), names->begin(), names->end());
    return ok_status();
  };
  for (const char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (auto s = flush(); !s) return s.error();
      continue;
    }
    entry += c;
  }
  if (auto s = flush(); !s) return s.error();
  if (out.empty()) return plain_error("host list", "names no host");
  return out;
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
