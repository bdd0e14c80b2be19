// Which device, port and GID a test uses: what the user forced (-d,
// --ib-port, -x) or what rdmacheck picks. Pure functions over what the
// device reports, so the choice is unit-tested over sysfs fixtures while the
// endpoint feeds it from ibv_query_port/ibv_query_gid_ex.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "conn/target.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::conn {

struct PortCandidate {
  int port = 1;
  bool active = false;
};

struct DeviceCandidate {
  std::string name;
  std::vector<PortCandidate> ports;
};

struct DevicePort {
  std::string device;
  int port = 1;
};

// The forced device (must exist) or the first with an ACTIVE port (that port,
// unless one is forced), else the first device's first port.
Result<DevicePort> choose_device_port(const std::vector<DeviceCandidate>& devices,
                                      const DeviceChoice& forced);

struct GidCandidate {
  int index = 0;
  std::array<uint8_t, 16> raw{};
  GidType type = GidType::kUnknown;
};

struct GidChoice {
  int index = 0;
  std::vector<std::string> warnings;  // a forced GID that looks wrong, a fallback taken
};

// On Ethernet (RoCE): the forced index, or the RoCE v2 GID that carries
// LOCAL_ADDRESS (the source address towards the peer), else the first IPv4
// RoCE v2 GID. On InfiniBand: the forced index, or the port GID (index 0).
// WHERE names the port in messages ("rxe0 port 1").
Result<GidChoice> choose_gid(const std::vector<GidCandidate>& gids, bool ethernet, int forced,
                             const std::string& local_address, const std::string& where);

// The same inputs read from sysfs (a live machine or a captured tree).
std::vector<DeviceCandidate> device_candidates(const std::vector<DeviceInfo>& devices);
std::vector<GidCandidate> gid_candidates(const PortInfo& port);

}  // namespace rdmacheck::conn
