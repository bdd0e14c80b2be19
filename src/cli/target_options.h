// The options of every command that talks to a peer, declared once: the host,
// its port, and the device/port/GID choice (serve declares the device part).
#pragma once

#include <CLI/CLI.hpp>

#include "conn/target.h"

namespace rdmacheck::cli {

struct TargetFlags {
  // perftest's -i for the device port (bw, lat, serve); ping keeps -i for its interval.
  bool short_ib_port = false;
  bool src = false;       // --src (commands that can connect through rdma_cm)
  bool path_mtu = false;  // -m/--mtu (bw, lat: perftest's -m)
};

// -d/--device (--ib-dev as perftest spells it), --ib-port, -x/--gid-index.
void add_device_options(CLI::App& app, conn::DeviceChoice& dev, TargetFlags f = {});
// HOST, -p/--port, the device options, and --src where asked for.
void add_target_options(CLI::App& app, conn::Target& t, TargetFlags f = {});

}  // namespace rdmacheck::cli
