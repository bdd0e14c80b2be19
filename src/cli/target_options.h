// The options of every command that talks to a peer, declared once: the host,
// its port, and the device/port/GID choice (serve declares the device part).
#pragma once

#include <CLI/CLI.hpp>

#include "conn/target.h"

namespace rdmacheck::cli {

// A short flag means one thing in every subcommand, and where perftest has
// the letter it means what it means there: -i is the device port, -c the
// connection type, -n the count, -b bidirectional (so serve's bind is --bind
// and ping's interval is --interval).
struct TargetFlags {
  bool src = false;       // --src (commands that can connect through rdma_cm)
  bool path_mtu = false;  // -m/--mtu (bw, lat: perftest's -m)
  // bw, lat: perftest's habits. HOST may be missing (the command then says
  // that serve is the server side), -T/--tos is perftest's rdma_cm ToS and the
  // traffic class is --tclass alone, --src is also --source_ip.
  bool perftest = false;
};

// -d/--device (--ib-dev as perftest spells it), -i/--ib-port, -x/--gid-index.
void add_device_options(CLI::App& app, conn::DeviceChoice& dev);
// HOST, -p/--port, the device options, and --src where asked for.
void add_target_options(CLI::App& app, conn::Target& t, TargetFlags f = {});

}  // namespace rdmacheck::cli
