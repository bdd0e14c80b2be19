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

struct GidCandidate {
  int index = 0;
  std::array<uint8_t, 16> raw{};
  GidType type = GidType::kUnknown;
};

struct PortCandidate {
  int port = 1;
  bool active = false;
  std::vector<GidCandidate> gids;  // the valid entries (may be left empty)
};

struct DeviceCandidate {
  std::string name;
  std::vector<PortCandidate> ports;
};

struct DevicePort {
  std::string device;
  int port = 1;
  std::string why;  // how it was chosen, for the report
};

// The forced device (-d, must exist); else the device and port whose GID
// table carries LOCAL_ADDRESS, the address this host reaches the peer from
// (the kernel chose it by its routes: on a host with several NICs that is the
// NIC towards the peer, whatever order the devices were created in); else the
// first ACTIVE port of any device; else the first device's first port. A
// forced --ib-port narrows each step to that port.
Result<DevicePort> choose_device_port(const std::vector<DeviceCandidate>& devices,
                                      const DeviceChoice& forced,
                                      const std::string& local_address = "");

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
