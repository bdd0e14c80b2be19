// The options of every command that talks to a peer, declared once: the host,
// its port, and the device/port/GID choice (serve declares the device part).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "conn/target.h"
#include "sysfs/rdma_sysfs.h"

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

// iproute2's `rdma dev show mlx5_0/1`: one device, and one of its ports (0 = all).
struct DevPort {
  std::string dev;  // "" = every device
  int port = 0;
  [[nodiscard]] bool device(const std::string& name) const { return dev.empty() || name == dev; }
  [[nodiscard]] bool subject(const std::string& dev_or_port) const;  // "rxe0" or "rxe0/1"
};
// A positional DEV[/PORT] on APP (devices, qps), checked as it is parsed.
void add_dev_port(CLI::App& app, DevPort& f);
// Why F names nothing on this machine ("" when it names a device and port it has).
std::string missing(const DevPort& f, const std::vector<DeviceInfo>& devices);

// -d/--device (--ib-dev as perftest spells it), -i/--ib-port, -x/--gid-index.
void add_device_options(CLI::App& app, conn::DeviceChoice& dev);
// HOST, -p/--port, the device options, and --src where asked for.
// How this client proves itself to serve: --psk-file, or --tls-cert,
// --tls-key and --tls-ca (each with its RDMACHECK_* variable).
void add_key_options(CLI::App& app, conn::Target& t);
void add_target_options(CLI::App& app, conn::Target& t, TargetFlags f = {});

}  // namespace rdmacheck::cli
