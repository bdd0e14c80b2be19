#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/print.h"
#include "devices/inventory.h"

namespace rdmacheck::cli {

Runner attach_devices(CLI::App& app) {
  struct Opts {
    OutputFlags out;
    std::string root;
  };
  auto o = std::make_shared<Opts>();
  add_output_flags(app, o->out, "print JSON instead of tables");
  app.add_option("--root", o->root,
                 "read sysfs under DIR instead of / (a capture; also $RDMACHECK_ROOT)")
      ->check(CLI::ExistingDirectory);
  app.footer("Exit status: 0 when at least one RDMA device exists, 2 when none.");
  return [o]() {
    const FsRoot fs = FsRoot::from_option(o->root);
    // Port MTUs come from libibverbs, which only sees this machine's devices.
    const bool live = fs.root() == "/";
    const auto inv = devices::take_inventory(fs, live);
    o->out.root = fs.root();
    if (!print(inv, o->out)) return 2;
    return inv.devices.empty() ? 2 : 0;
  };
}

}  // namespace rdmacheck::cli
