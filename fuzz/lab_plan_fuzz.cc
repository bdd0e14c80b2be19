// libFuzzer target for what a user types into `rdmacheck lab`: --setup/--run
// ("h2:rdmacheck ping h1", parse_host_cmd) and --fault ("loss:1@h2-2",
// fault_commands). The first byte picks the parser and the number of hosts
// (and NICs); the rest is the argument. A value or a one-line refusal, never a
// crash; what is accepted names an existing host.
#include <cstdint>
#include <string>

#include "lab/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  if (size < 1) return 0;
  const int hosts = 1 + (data[0] >> 1) % 8;
  const int nics = 1 + (data[0] >> 4) % 2;
  const std::string arg(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    bool no_server = false;
    (void)lab::fault_commands(arg, hosts, nics, &no_server);
  } else if (auto c = lab::parse_host_cmd(arg, hosts)) {
    if (c->host.empty()) __builtin_trap();
  }
  return 0;
}
