#include <fmt/core.h>

#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "devices/inventory.h"
#include "doctor/check.h"
#include "output/print.h"

namespace rdmacheck::cli {

Runner attach_devices(CLI::App& app) {
  struct Opts {
    OutputFlags out;
    std::string root;
    DevPort only;
  };
  auto o = std::make_shared<Opts>();
  add_dev_port(app, o->only);
  add_output_flags(app, o->out, "print JSON instead of tables");
  app.add_option("--root", o->root,
                 "read sysfs under DIR instead of / (a capture; also $RDMACHECK_ROOT)")
      ->check(CLI::ExistingDirectory);
  app.add_flag_callback(
      "-v,--verbose", [o] { o->out.detail = Detail::kVerbose; },
      "also every port's counters (ports/N/counters and hw_counters), as perfquery and "
      "'rdma statistic' show them");
  app.footer("Exit status: 0 when at least one RDMA device exists, 2 when none.");
  return [o, &app]() {
    const FsRoot fs = FsRoot::from_option(o->root);
    // Port MTUs come from libibverbs, which only sees this machine's devices.
    const bool live = fs.is_live();
    auto inv = devices::take_inventory(fs, live);
    if (!inv.devices.empty()) {
      if (auto why = missing(o->only, inv.devices); !why.empty()) return usage_error(app, why);
      std::erase_if(inv.devices, [&](const DeviceInfo& d) { return !o->only.device(d.name); });
      for (auto& d : inv.devices) {
        std::erase_if(d.ports, [&](const PortInfo& p) {
          return o->only.port != 0 && p.port != o->only.port;
        });
      }
    }
    if (o->out.detail == Detail::kVerbose)
      inv.counters = devices::read_port_counters(fs, inv.devices);
    // Why there is none is doctor's to say: one finding, one fix, everywhere.
    if (auto none = inv.devices.empty() ? doctor::no_rdma_device(fs) : std::nullopt) {
      inv.why_none.push_back(fmt::format("{}: {}", id_name(*none), none->summary));
      for (const auto& e : none->evidence) inv.why_none.push_back(e);
      inv.why_none.push_back("fix: " + none->fix);
    }
    o->out.root = fs.root();
    if (!print(inv, o->out)) return 2;
    return devices::exit_status(inv);
  };
}

}  // namespace rdmacheck::cli
