// What each lab guest does, decided from the options before anything boots:
// its address, setup commands, whether it serves, what it runs. Pure; tested.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck::lab {

struct HostCmd {
  std::string host;  // "h1"
  std::string cmd;
};

struct LabOptions {
  int hosts = 2;
  std::vector<std::string> setup;   // "HOST:CMD"
  std::vector<std::string> run;     // "HOST:CMD"
  std::vector<std::string> faults;  // "NAME[@HOST]"
  std::string serve_args;           // appended to h1's serve command line
  bool json = false;
  bool verbose = false;  // also show kernel messages
  bool keep = false;     // keep the work directory
  std::string kernel;    // --kernel image
  std::string workdir;
  std::string accel = "tcg";
  int memory_mb = 768;
  std::chrono::seconds timeout{300};
};

struct GuestPlan {
  std::string name;  // "h1"
  int index = 1;
  std::string address;  // "198.18.0.1"
  std::vector<std::string> setup;
  bool serve = false;
  std::string serve_args;
  std::vector<std::string> run;
};

// The lab's pre-shared key, made fresh for each boot (owner-only) in the
// lab's directory: h1's serve requires it, every guest's clients prove it
// (RDMACHECK_PSK_FILE), so each lab run proves the key exchange end to end.
constexpr const char* kLabKeyFile = "lab.psk";

constexpr int kMaxHosts = 8;

// "h2:rdmacheck ping h1" -> {h2, "rdmacheck ping h1"}; the host must exist.
Result<HostCmd> parse_host_cmd(const std::string& s, int hosts);
// Setup commands for a built-in fault: firewall, mtu-mismatch, loss:PERCENT, no-server.
Result<std::vector<HostCmd>> fault_commands(const std::string& fault, int hosts, bool* no_server);

Result<std::vector<GuestPlan>> make_plan(const LabOptions& o);

// /etc/hosts for the guests.
std::string hosts_file(const std::vector<GuestPlan>& plan);
// The bash script a guest runs after switch_root (see lab.cc for the files it writes).
std::string guest_script(const GuestPlan& g, const std::vector<GuestPlan>& plan);

}  // namespace rdmacheck::lab
