// What each lab guest does, decided from the options before anything boots:
// its address, setup commands, whether it serves, what it runs. Pure; tested.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "base/result.h"
#include "lab/switch_fault.h"

namespace rdmacheck::lab {

// Which NIC each rxe device sits on. On real hosts mlx5_0 is often not the
// NIC that routes to the peer: kReversed makes the lab's device order
// disagree with its NIC order (rxe0 on the last NIC), so that only a choice
// by route, never "the first device", finds the right one.
enum class DeviceOrder { kNics, kReversed };

}  // namespace rdmacheck::lab

namespace rdmacheck {
template <>
struct EnumNames<lab::DeviceOrder> {
  static constexpr std::array<std::pair<lab::DeviceOrder, std::string_view>, 2> table{{
      {lab::DeviceOrder::kNics, "nics"},
      {lab::DeviceOrder::kReversed, "reversed"},
  }};
};
}  // namespace rdmacheck

namespace rdmacheck::lab {

struct HostCmd {
  std::string host;  // "h1"
  std::string cmd;
};

struct LabOptions {
  int hosts = 2;
  int nics = 1;  // NICs per host, each on its own wire
  DeviceOrder device_order = DeviceOrder::kNics;
  std::vector<std::string> setup;        // "HOST:CMD"
  std::vector<std::string> run;          // "HOST:CMD"
  std::vector<std::string> faults;       // "NAME[:ARG][@HOST[-NIC]]", or a switch fault
  std::vector<std::string> fault_at;     // "SECONDS:SWITCH-FAULT": starts that long into the run
  std::vector<std::string> fault_until;  // "SECONDS:SWITCH-FAULT": ends then
  uint64_t seed = 1;                     // the switch faults' random choices
  std::string serve_args;                // appended to h1's serve command line
  bool ssh = false;   // sshd and root's keys on every guest (lab/ssh.h), and an MPI hostfile
  bool mesh = false;  // ssh, and the default test is `rdmacheck mesh` over all guests from h1
  bool json = false;
  bool verbose = false;  // also show kernel messages
  bool keep = false;     // keep the work directory
  std::string kernel;    // --kernel image
  std::string workdir;
  std::string accel = "tcg";
  int memory_mb = 768;
  std::chrono::seconds timeout{300};
};

// NIC k (1-based) of host H: on wire k, netdev eth(k-1), 198.18.(k-1).H/24,
// named hH-k in /etc/hosts.
struct GuestNic {
  int wire = 1;
  std::string netdev;   // "eth0"
  std::string device;   // the rxe device on it: "rxe0" (the reverse with DeviceOrder::kReversed)
  std::string address;  // "198.18.0.1"
  std::string name;     // "h1-1"
  std::string mac;      // "52:54:00:12:34:01"
};

struct GuestPlan {
  std::string name;  // "h1"
  int index = 1;
  std::string address;         // "198.18.0.1": the first wire's, which the host name resolves to
  std::vector<GuestNic> nics;  // nics[k - 1] sits on wire k
  std::vector<std::string> setup;
  bool serve = false;
  std::string serve_args;
  bool ssh = false;  // start sshd before it says ready (lab/ssh.h)
  std::vector<std::string> run;
};

// The lab's pre-shared key, made fresh for each boot (owner-only) in the
// lab's directory: h1's serve requires it, every guest's clients prove it
// (RDMACHECK_PSK_FILE), so each lab run proves the key exchange end to end.
constexpr const char* kLabKeyFile = "lab.psk";

constexpr int kMaxHosts = 8;
constexpr int kMaxNics = 3;

// One port of the hub: a guest's NIC on one wire. The hub forwards a frame
// only between ports of the same wire. Socket names are relative to the lab's
// directory.
struct WirePort {
  std::string host;  // "h1"
  GuestNic nic;
  std::string hub_socket;    // "hub-h1-2.sock": the hub's end
  std::string guest_socket;  // "h1-2.sock": QEMU's end
};

// Every NIC of every host, wire by wire (wire 1's ports first, in host order).
std::vector<WirePort> wire_ports(const std::vector<GuestPlan>& plan);

// "h2" -> 2 when the lab has h2.
Result<int> host_index(const std::string& name, int hosts);
struct NicTarget {
  std::string host;
  int nic = 0;  // 0: none named
};
// "h2" -> {h2, 0}; "h2-2" -> {h2, 2}, the name of h2's address on wire 2.
Result<NicTarget> parse_nic_target(const std::string& s, int hosts, int nics);

// "h2:rdmacheck ping h1" -> {h2, "rdmacheck ping h1"}; the host must exist.
Result<HostCmd> parse_host_cmd(const std::string& s, int hosts);
// Setup commands for a built-in fault: firewall, mtu-mismatch, loss:PERCENT,
// link-down, powersave, no-server; "@h2" puts it on h2, "@h2-2" on h2's NIC 2
// (eth1) alone.
Result<std::vector<HostCmd>> fault_commands(const std::string& fault, int hosts, int nics,
                                            bool* no_server);

Result<std::vector<GuestPlan>> make_plan(const LabOptions& o);
// The switch faults of --fault, --fault-at and --fault-until, in that order.
// A timed fault must be a switch fault: the hub keeps the time, the guests
// do not (a host fault there is refused with a one-line error).
Result<std::vector<SwitchFault>> switch_faults(const LabOptions& o);

// /etc/hosts for the guests.
std::string hosts_file(const std::vector<GuestPlan>& plan);
// The bash script a guest runs after switch_root (see lab.cc for the files it writes).
std::string guest_script(const GuestPlan& g, const std::vector<GuestPlan>& plan);

}  // namespace rdmacheck::lab
