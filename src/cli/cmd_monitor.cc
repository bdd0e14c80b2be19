#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "monitor/daemon.h"
#include "monitor/peers.h"
#include "monitor/report.h"
#include "output/print.h"

namespace rdmacheck::cli {
namespace {

std::atomic<bool> g_reload{false};
extern "C" void on_hup(int /*sig*/) { g_reload.store(true); }

// "ADDR:PORT", "[V6]:PORT" or "PORT" (loopback): where /metrics listens.
std::string split_listen(const std::string& v, std::string& addr, uint16_t& port) {
  std::string host = "127.0.0.1";
  std::string p = v;
  if (!v.empty() && v.front() == '[') {
    const auto close = v.find("]:");
    if (close == std::string::npos) return "--metrics-listen [V6]:PORT";
    host = v.substr(1, close - 1);
    p = v.substr(close + 2);
  } else if (const auto colon = v.rfind(':'); colon != std::string::npos) {
    host = v.substr(0, colon);
    p = v.substr(colon + 1);
  }
  if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos || p.size() > 5 ||
      std::stoi(p) > 65535) {
    return "--metrics-listen is ADDR:PORT (PORT 0: any free port), e.g. 127.0.0.1:9479";
  }
  addr = host;
  port = static_cast<uint16_t>(std::stoi(p));
  return {};
}

struct MonitorCli {
  monitor::MonitorOptions m;
  std::string transports = "rc,ud";
  std::string peers_from = "list";
  double interval_s = 10;
  double timeout_s = 8;
  std::string listen = "127.0.0.1:9479";
  bool no_metrics = false;
  int max_in_flight = 4;
  OutputFlags out;
};

void add_monitor_options(CLI::App& app, MonitorCli& o) {
  app.add_option("--peers", o.m.peers_file,
                 "file of the peers to watch: one host or address per line (HOST:PORT for "
                 "another port), '#' comments; this host is skipped, so a fleet shares one file")
      ->check(CLI::ExistingFile);
  app.add_option("--peers-from", o.peers_from,
                 "what --peers is: list (the above), hostfile (an MPI hostfile: 'HOST "
                 "slots=N' lines), or slurm (no --peers: the nodes of the Slurm job this runs in, "
                 "from $SLURM_JOB_NODELIST)")
      ->check(CLI::IsMember({"list", "hostfile", "slurm"}))
      ->capture_default_str();
  app.add_option("-p,--port", o.m.default_port, "the peers' serve port, where a line names none")
      ->default_val(proto::kDefaultPort)
      ->check(CLI::Range(1, 65535));
  add_device_options(app, o.m.probe.target.dev);
  add_key_options(app, o.m.probe.target);  // the fleet's key line, or its certificates
  app.add_option("--transports", o.transports, "what each round probes: rc, ud or rc,ud")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            if (v == "rc" || v == "ud" || v == "rc,ud" || v == "ud,rc") return {};
            return "--transports is rc, ud or rc,ud";
          },
          "rc|ud|rc,ud"))
      ->capture_default_str();
  app.add_option("--interval", o.interval_s,
                 "seconds between one peer's rounds (each drawn within +-10 %, so a fleet does "
                 "not probe in lock-step)")
      ->check(CLI::Range(0.5, 3600.0))
      ->capture_default_str();
  app.add_option("-n,--count", o.m.probe.count, "probes per round and transport")
      ->check(CLI::Range(1, 100))
      ->default_val(5);
  app.add_option("--timeout", o.timeout_s, "seconds one round may take, connection included")
      ->check(CLI::Range(1.0, 120.0))
      ->capture_default_str();
  app.add_option("--max-in-flight", o.max_in_flight, "rounds at once, all peers together")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--metrics-listen", o.listen,
                 "where /metrics answers Prometheus: ADDR:PORT (loopback by default; PORT 0 "
                 "takes any free port)")
      ->capture_default_str();
  app.add_flag("--no-metrics", o.no_metrics, "no /metrics endpoint (--textfile or --once only)");
  app.add_option("--textfile", o.m.textfile,
                 "also write the metrics to this .prom file after every round, atomically (for "
                 "node_exporter's textfile collector)")
      ->check(file_in_writable_dir());
  app.add_flag("--once", o.m.once, "probe every peer once, print the rounds and exit");
  add_output_flags(app, o.out, "with --once: print the rounds as JSON");
  app.footer(
      "Runs until SIGTERM or SIGINT; SIGHUP re-reads --peers. Metrics and alert rules: "
      "docs/monitor.md, contrib/prometheus/.\n"
      "Exit status with --once: 0 every round answered, 1 loss or a stalled peer, 2 a peer down "
      "or a round that could not probe; without --once: 0 after SIGTERM, 2 on a bad start.");
}

// Where the peers come from: --peers FILE (a list or an MPI hostfile) or the
// Slurm job's nodes. An empty string, or why the options do not say.
std::string choose_peer_source(const MonitorCli& o, monitor::MonitorOptions& m) {
  if (o.peers_from == "slurm") {
    if (!m.peers_file.empty())
      return "--peers-from slurm takes the Slurm job's nodes; drop --peers";
    const char* list = std::getenv("SLURM_JOB_NODELIST");
    if (list == nullptr || *list == '\0') list = std::getenv("SLURM_NODELIST");
    if (list == nullptr || *list == '\0') {
      return "--peers-from slurm: SLURM_JOB_NODELIST is not set (run it inside a Slurm job, e.g. "
             "from srun, or give --peers FILE)";
    }
    m.peer_source = monitor::PeerSource::kSlurm;
    m.slurm_nodelist = list;
  } else if (m.peers_file.empty()) {
    return "--peers FILE is required (or --peers-from slurm in a Slurm job)";
  } else if (o.peers_from == "hostfile") {
    m.peer_source = monitor::PeerSource::kHostfile;
  }
  return {};
}

// The monitor's options from the command line's; an empty string, or why not.
std::string monitor_options(const MonitorCli& o, monitor::MonitorOptions& m) {
  m = o.m;
  m.transports.clear();
  if (o.transports.find("rc") != std::string::npos) m.transports.push_back(proto::Transport::kRc);
  if (o.transports.find("ud") != std::string::npos) m.transports.push_back(proto::Transport::kUd);
  m.schedule.interval = std::chrono::milliseconds(static_cast<int64_t>(o.interval_s * 1000));
  m.schedule.max_in_flight = static_cast<size_t>(o.max_in_flight);
  m.probe.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  if (auto why = choose_peer_source(o, m); !why.empty()) return why;
  if ((o.out.json || !o.out.json_file.empty()) && !m.once) {
    return "--json and --json-file print --once's rounds; add --once";
  }
  if (!o.no_metrics && !m.once) return split_listen(o.listen, m.metrics_addr, m.metrics_port);
  return {};
}

int watch(monitor::MonitorOptions m, const OutputFlags& out) {
  const auto names = monitor::self_names();
  m.prober = names.empty() ? "localhost" : names.back();
  m.log = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  struct sigaction sa {};
  sa.sa_handler = on_hup;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGHUP, &sa, nullptr);
  auto rep = monitor::run_monitor(m, stop_requested(), g_reload);
  if (!rep) {
    std::fprintf(stderr, "rdmacheck monitor: %s\n", rep.error().message().c_str());
    return 2;
  }
  int status = 0;
  if (m.once) status = print(*rep, out) ? rep->exit_status() : 2;
  if (rep->abandoned > 0) {
    // Rounds still in flight past the stop's deadline: their threads hold
    // verbs objects; leave without running destructors under them.
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(status);
  }
  return status;
}

}  // namespace

Runner attach_monitor(CLI::App& app) {
  auto o = std::make_shared<MonitorCli>();
  o->m.probe.target.fs = FsRoot::live();
  add_monitor_options(app, *o);
  return [o, &app]() {
    monitor::MonitorOptions m;
    if (auto why = monitor_options(*o, m); !why.empty()) return usage_error(app, why);
    return watch(std::move(m), o->out);
  };
}

}  // namespace rdmacheck::cli
