// A netdev's negotiated link and the modes it supports, as `ethtool DEV`
// shows them, read with the ETHTOOL_GLINKSETTINGS ioctl. Decoding is pure.
#pragma once

#include <linux/ethtool.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::doctor {

struct LinkSettings {
  std::optional<uint32_t> speed_mbps;  // nullopt: unknown (no link, or a virtual NIC)
  std::string duplex = "unknown";      // "full", "half", "unknown"
  bool autoneg = false;
  std::string port;                    // "FIBRE", "Direct Attach Copper", "Twisted Pair", ...
  std::vector<std::string> supported;  // speed modes only: "100000baseCR4/Full"
  std::vector<std::string> advertised;
  std::vector<std::string> partner;  // what the link partner advertised (empty when unknown)
};

// The speed in Mb/s a mode name carries: "100000baseCR4/Full" -> 100000; 0 if none.
uint32_t mode_speed_mbps(const std::string& mode);
// The fastest of a list of modes in Mb/s, 0 for an empty list.
uint32_t fastest_mbps(const std::vector<std::string>& modes);
// Names of the speed modes set in a link-mode bitmap (ethtool's u32 words).
std::vector<std::string> mode_names(std::span<const uint32_t> words);

// Pure decoding of what the ioctl returned: the fixed part and the three
// bitmaps (supported, advertising, lp_advertising), nwords words each.
LinkSettings decode_link_settings(const ethtool_link_settings& base,
                                  std::span<const uint32_t> masks);

// ETHTOOL_GLINKSETTINGS on the named netdev (no privileges needed).
Result<LinkSettings> read_link_settings(const std::string& netdev);

nlohmann::json to_json(const LinkSettings& l);
LinkSettings link_settings_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::doctor
