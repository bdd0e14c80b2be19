#include "doctor/ethtool.h"

#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace rdmacheck::doctor {
namespace {

struct Mode {
  int bit;
  const char* name;
};

#define M(x) {ETHTOOL_LINK_MODE_##x##_BIT, #x},
constexpr Mode kModes[] = {
#include "doctor/link_modes.inc"
};
#undef M

// "100000baseCR4_Full" -> "100000baseCR4/Full", the way ethtool prints it.
std::string display_name(const char* raw) {
  std::string s = raw;
  for (const char* suffix : {"_Full", "_Half"}) {
    const auto n = std::strlen(suffix);
    if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0) s[s.size() - n] = '/';
  }
  return s;
}

std::string port_name(uint8_t port) {
  switch (port) {
    case PORT_TP:
      return "Twisted Pair";
    case PORT_AUI:
      return "AUI";
    case PORT_MII:
      return "MII";
    case PORT_FIBRE:
      return "FIBRE";
    case PORT_BNC:
      return "BNC";
    case PORT_DA:
      return "Direct Attach Copper";
    case PORT_NONE:
      return "None";
    default:
      return "Other";
  }
}

// An fd that closes itself.
struct Sock {
  int fd;
  ~Sock() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

uint32_t mode_speed_mbps(const std::string& mode) {
  uint32_t v = 0;
  for (char c : mode) {
    if (c < '0' || c > '9') break;
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  return v;
}

uint32_t fastest_mbps(const std::vector<std::string>& modes) {
  uint32_t best = 0;
  for (const auto& m : modes) best = std::max(best, mode_speed_mbps(m));
  return best;
}

std::vector<std::string> mode_names(std::span<const uint32_t> words) {
  std::vector<std::string> out;
  for (const auto& m : kModes) {
    const auto word = static_cast<size_t>(m.bit) / 32;
    if (word < words.size() && (words[word] >> (m.bit % 32) & 1u) != 0) {
      out.push_back(display_name(m.name));
    }
  }
  return out;
}

LinkSettings decode_link_settings(const ethtool_link_settings& base,
                                  std::span<const uint32_t> masks) {
  LinkSettings l;
  if (base.speed != 0 && base.speed != static_cast<uint32_t>(SPEED_UNKNOWN)) {
    l.speed_mbps = base.speed;
  }
  l.duplex = base.duplex == DUPLEX_FULL ? "full" : base.duplex == DUPLEX_HALF ? "half" : "unknown";
  l.autoneg = base.autoneg == AUTONEG_ENABLE;
  l.port = port_name(base.port);
  const auto n = static_cast<size_t>(std::max<int>(base.link_mode_masks_nwords, 0));
  if (masks.size() >= 3 * n) {
    l.supported = mode_names(masks.subspan(0, n));
    l.advertised = mode_names(masks.subspan(n, n));
    l.partner = mode_names(masks.subspan(2 * n, n));
  }
  return l;
}

Result<LinkSettings> read_link_settings(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    return plain_error("ETHTOOL_GLINKSETTINGS", "bad netdev name '" + netdev + "'");
  }
  Sock s{::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) return errno_error("socket(AF_INET)", netdev);
  // The kernel's handshake: ask with 0 words, it answers with -(words it needs).
  // The reply is the fixed struct followed by three bitmaps of that many words.
  constexpr size_t kHead = sizeof(ethtool_link_settings) / sizeof(uint32_t);
  constexpr size_t kMaxWords = 127;  // link_mode_masks_nwords is an s8
  std::vector<uint32_t> buf(kHead + 3 * kMaxWords);
  auto* req = reinterpret_cast<ethtool_link_settings*>(buf.data());
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(buf.data());
  req->cmd = ETHTOOL_GLINKSETTINGS;
  if (::ioctl(s.fd, SIOCETHTOOL, &ifr) != 0) {
    return errno_error("ioctl(ETHTOOL_GLINKSETTINGS)", netdev);
  }
  if (req->link_mode_masks_nwords >= 0 || req->cmd != ETHTOOL_GLINKSETTINGS) {
    return plain_error("ioctl(ETHTOOL_GLINKSETTINGS)", netdev + ": no link-mode handshake");
  }
  const auto nwords = static_cast<int8_t>(-req->link_mode_masks_nwords);
  std::fill(buf.begin(), buf.end(), 0u);
  req->cmd = ETHTOOL_GLINKSETTINGS;
  req->link_mode_masks_nwords = nwords;
  if (::ioctl(s.fd, SIOCETHTOOL, &ifr) != 0) {
    return errno_error("ioctl(ETHTOOL_GLINKSETTINGS)", netdev);
  }
  return decode_link_settings(
      *req, std::span<const uint32_t>(buf.data() + kHead, 3 * static_cast<size_t>(nwords)));
}

nlohmann::json to_json(const LinkSettings& l) {
  return {{"speed_mbps", l.speed_mbps ? nlohmann::json(*l.speed_mbps) : nlohmann::json()},
          {"duplex", l.duplex},
          {"autoneg", l.autoneg},
          {"port", l.port},
          {"supported", l.supported},
          {"advertised", l.advertised},
          {"partner", l.partner}};
}

LinkSettings link_settings_from_json(const nlohmann::json& j) {
  LinkSettings l;
  if (j.contains("speed_mbps") && j["speed_mbps"].is_number()) {
    l.speed_mbps = j["speed_mbps"].get<uint32_t>();
  }
  l.duplex = j.value("duplex", "unknown");
  l.autoneg = j.value("autoneg", false);
  l.port = j.value("port", "");
  l.supported = j.value("supported", std::vector<std::string>{});
  l.advertised = j.value("advertised", std::vector<std::string>{});
  l.partner = j.value("partner", std::vector<std::string>{});
  return l;
}

}  // namespace rdmacheck::doctor
