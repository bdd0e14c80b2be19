// libFuzzer target for what a user types into `rdmacheck lab`: --setup/--run
// ("h2:rdmacheck ping h1", parse_host_cmd) and --fault ("loss:1@h2-2",
// fault_commands; "switch-loss:5@h2:in", parse_switch_fault; --fault-at's
// "10:switch-flap:1/5@h2", parse_timed_fault). The first byte picks the
// parser (bit 0, and bit 6 for the switch's) and the number of hosts (and
// NICs); the rest is the argument. A value or a one-line refusal, never a
// crash; what is accepted names an existing host and NIC.
#include <cstdint>
#include <string>

#include "lab/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  if (size < 1) return 0;
  const int hosts = 1 + (data[0] >> 1) % 8;
  const int nics = 1 + (data[0] >> 4) % 2;
  const std::string arg(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) && (data[0] & 0x40)) {
    auto timed = lab::parse_timed_fault(arg, "--fault-at");
    const std::string spec = timed ? timed->second : arg;
    if (auto f = lab::parse_switch_fault(spec, hosts, nics)) {
      auto h = lab::host_index(f->host, hosts);
      if (!h || f->nic < 1 || f->nic > nics || f->percent < 0 || f->percent > 100) __builtin_trap();
    }
  } else if (data[0] & 1) {
    bool no_server = false;
    (void)lab::fault_commands(arg, hosts, nics, &no_server);
  } else if (auto c = lab::parse_host_cmd(arg, hosts)) {
    if (c->host.empty()) __builtin_trap();
  }
  return 0;
}
