// `rdmacheck monitor`'s loop (#26): the scheduler picks the peers due, each
// due peer's round (every transport in turn) runs on its own thread, at most
// ScheduleOptions::max_in_flight at once; each round is counted into the
// registry, which /metrics serves and --textfile writes after every round.
// SIGHUP (reload) re-reads the peer file; a peer that left it is forgotten
// (its series too). --once probes every peer once and returns the rounds.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "monitor/probe.h"
#include "monitor/schedule.h"

namespace rdmacheck::monitor {

struct MonitorOptions {
  std::string peers_file;
  PeerSource peer_source = PeerSource::kList;
  std::string slurm_nodelist;  // kSlurm: the job's $SLURM_JOB_NODELIST, as the CLI read it
  uint16_t default_port = 0;
  std::vector<proto::Transport> transports = {proto::Transport::kRc, proto::Transport::kUd};
  ProbeOptions probe;
  ScheduleOptions schedule;
  std::string metrics_addr;  // "" = no /metrics endpoint
  uint16_t metrics_port = 0;
  std::string textfile;  // the .prom file to rewrite after every round ("" = none)
  std::string prober;    // this host's name in the metrics
  bool once = false;
  // Where the loop's one-line events go (listening, a reload, a textfile
  // that cannot be written); nothing when empty.
  std::function<void(const std::string&)> log;
};

struct MonitorReport {
  std::string prober;
  std::vector<std::string> peers;   // the peers probed (this host left out)
  std::vector<ProbeResult> rounds;  // --once: every round, in the peer file's order
  std::string metrics_listen;       // "ADDR:PORT" the endpoint got ("" = none)
  size_t abandoned = 0;  // rounds still running at the stop's deadline (their threads are left)
  [[nodiscard]] int exit_status()
      const;  // 0 every round up, 1 some loss or stall, 2 any down or error
};

// Runs until STOP (SIGTERM, SIGINT) or, with o.once, until every peer was
// probed once; RELOAD (SIGHUP) is cleared when the peer file was re-read.
// ON_LISTEN, when given, is told the endpoint's address once it listens.
Result<MonitorReport> run_monitor(const MonitorOptions& o, const std::atomic<bool>& stop,
                                  std::atomic<bool>& reload);

}  // namespace rdmacheck::monitor
