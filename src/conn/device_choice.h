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

// The GID that carries ADDRESS (IPv4 as v4-mapped), as sysfs prints it; ""
// when ADDRESS is not an IP address.
std::string address_gid_text(const std::string& address);

// The flags as the user typed them ("-d rxe1 -x 3"); "" when nothing was forced.
std::string forced_flags(const DeviceChoice& forced);

// What one side chose and why, for the report: the route (or, on the server,
// the address the client connected to), its netdev, the device and port on
// it, and the GID index; or the flags that forced them.
struct ChoiceStory {
  bool server = false;        // LOCAL_ADDRESS is the address the client connected to
  std::string peer_address;   // the other side's address on this connection
  std::string local_address;  // this side's: the route's source address
  std::string netdev;         // the netdev the chosen GID belongs to
  std::string device;
  int port = 1;
  int gid_index = 0;
  std::string gid_type;
  std::string device_why;  // choose_device_port's reason, or rdma_cm's
  std::string forced;      // forced_flags(), "" = chosen by the route
};
std::string explain_choice(const ChoiceStory& s);

// The same inputs read from sysfs (a live machine or a captured tree).
std::vector<DeviceCandidate> device_candidates(const std::vector<DeviceInfo>& devices);
std::vector<GidCandidate> gid_candidates(const PortInfo& port);

}  // namespace rdmacheck::conn
