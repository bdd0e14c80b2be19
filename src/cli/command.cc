#include "cli/command.h"

#include <csignal>
#include <cstdio>

namespace rdmacheck::cli {
namespace {

std::atomic<bool> g_stop{false};

constexpr Command kCommands[] = {
    {"check",
     "the whole three-layer test against a server: device, connection, performance, with a "
     "verdict",
     attach_check},
    {"devices", "list RDMA devices, ports and GID tables (ibv_devinfo + show_gids in one view)",
     attach_devices},
    {"doctor",
     "check every host-side cause of a bad RDMA link and name it, with evidence and a fix",
     attach_doctor},
    {"qps", "list every QP (device/port, QPN, type, state, PID, command), flag stuck ones",
     attach_qps},
    {"serve", "run the test server that ping, bw, lat and check clients talk to", attach_serve},
    {"ping",
     "prove an RC (or UD) connection to a server: QP timeline, RTTs, size ladder, diagnosis",
     attach_ping},
    {"bw", "measure bandwidth to a server (write/read/send/atomics), counters and a verdict",
     attach_bw},
    {"lat", "measure latency to a server (ping-pong or round trips), percentiles and a verdict",
     attach_lat},
    {"mesh",
     "every pair of hosts of a cluster under MPI; names the bad host or link (rdmacheck-mesh)",
     attach_mesh},
    {"monitor",
     "watch every peer's RDMA path all the time (RC and UD probes through serve) and export "
     "the results to Prometheus",
     attach_monitor},
    {"explain", "say what a finding id means, when it is raised, its evidence and the fix",
     attach_explain},
    {"keygen", "make a client's key and add it to a server's key ring (serve --psk-file)",
     attach_keygen},
    {"lab", "boot a real two-host Soft-RoCE network in QEMU and run rdmacheck on it", attach_lab},
    {"completion", "print the bash completion script (the build installs it)", attach_completion,
     true},
    {"perftest-flags", "print docs/perftest-flags.md (perftest's flags and their meaning here)",
     attach_perftest_flags, true},
};

extern "C" void on_signal(int /*sig*/) { g_stop.store(true); }

}  // namespace

std::span<const Command> commands() { return kCommands; }

const std::atomic<bool>& stop_requested() { return g_stop; }

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace rdmacheck::cli
