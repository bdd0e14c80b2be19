#include "monitor/daemon.h"

#include <fmt/core.h>

#include <condition_variable>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "base/atomic_file.h"
#include "monitor/http.h"
#include "monitor/port_counters.h"

namespace rdmacheck::monitor {
namespace {

// What the round threads hand back to the loop.
struct Mailbox {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, std::vector<ProbeResult>>> finished;
  size_t running = 0;
};

// What a round thread needs, copied: it may outlive the loop (a stop's deadline).
struct RoundJob {
  Peer peer;
  std::vector<proto::Transport> transports;
  ProbeOptions probe;
  std::string prober;
  std::shared_ptr<PortCounterTracker> ports;
};

void run_round(const RoundJob& job, const std::shared_ptr<Registry>& registry,
               const std::shared_ptr<Mailbox>& box) {
  std::vector<ProbeResult> rounds;
  for (const auto t : job.transports) {
    rounds.push_back(probe(job.peer, t, job.probe));
    record(*registry, job.prober, rounds.back());
    job.ports->sample(*registry, job.prober, rounds.back().device, rounds.back().port);
  }
  const std::lock_guard lock(box->mu);
  box->finished.emplace_back(job.peer.name, std::move(rounds));
  --box->running;
  box->cv.notify_all();
}

// Where the peers came from, for messages.
std::string source_of(const MonitorOptions& o) {
  return o.peer_source == PeerSource::kSlurm ? "SLURM_JOB_NODELIST" : o.peers_file;
}

Result<std::vector<Peer>> read_peers(const MonitorOptions& o) {
  switch (o.peer_source) {
    case PeerSource::kList:
      return load_peers(o.peers_file, o.default_port);
    case PeerSource::kHostfile: {
      std::ifstream in(o.peers_file, std::ios::binary);
      if (!in) return errno_error("open", o.peers_file);
      std::ostringstream ss;
      ss << in.rdbuf();
      auto peers = parse_hostfile(ss.str(), o.default_port, o.peers_file);
      if (peers && peers->empty()) return plain_error(o.peers_file, "no host in the hostfile");
      return peers;
    }
    case PeerSource::kSlurm: {
      auto names = expand_hostlist(o.slurm_nodelist);
      if (!names) return plain_error("SLURM_JOB_NODELIST", names.error().message());
      std::string lines;
      for (const auto& n : *names) lines += n + "\n";
      return parse_peers(lines, o.default_port, "SLURM_JOB_NODELIST");
    }
  }
  return plain_error("peers", "no source");
}

Result<std::vector<Peer>> peers_of(const MonitorOptions& o) {
  auto peers = read_peers(o);
  if (!peers) return peers.error();
  auto mine = without_self(std::move(*peers), self_names(), self_addresses());
  if (mine.empty()) return plain_error(source_of(o), "lists only this host: nothing to probe");
  return mine;
}

std::vector<std::string> names_of(const std::vector<Peer>& peers) {
  std::vector<std::string> v;
  v.reserve(peers.size());
  for (const auto& p : peers) v.push_back(p.name);
  return v;
}

class Loop {
 public:
  Loop(const MonitorOptions& o, std::vector<Peer> peers)
      : o_(o),
        registry_(std::make_shared<Registry>()),
        box_(std::make_shared<Mailbox>()),
        ports_(std::make_shared<PortCounterTracker>(o.probe.target.fs)),
        sched_(names_of(peers), o.schedule, Clock::now()) {
    declare_metrics(*registry_);
    declare_port_metrics(*registry_);
    set(std::move(peers));
    for (const auto& p : peers_) pending_.push_back(p.name);
  }

  Status listen(MonitorReport& rep) {
    if (o_.metrics_addr.empty()) return ok_status();
    auto s = MetricsServer::start(o_.metrics_addr, o_.metrics_port,
                                  [r = registry_] { return r->exposition(); });
    if (!s) return s.error();
    http_ = std::move(*s);
    rep.metrics_listen = o_.metrics_addr.find(':') != std::string::npos
                             ? fmt::format("[{}]:{}", o_.metrics_addr, http_->port())
                             : fmt::format("{}:{}", o_.metrics_addr, http_->port());
    say(fmt::format("rdmacheck monitor: metrics on http://{}/metrics", rep.metrics_listen));
    return ok_status();
  }

  void run(MonitorReport& rep, const std::atomic<bool>& stop, std::atomic<bool>& reload) {
    std::map<std::string, std::vector<ProbeResult>> once;
    while (!stop.load()) {
      if (reload.exchange(false)) reread();
      start(o_.once ? due_once() : sched_.due(Clock::now()));
      auto done = wait();
      for (auto& [name, rounds] : done) {
        // A round of a peer that a reload removed meanwhile counted into
        // series the reload had forgotten: forget them again.
        if (by_name_.count(name) == 0) registry_->forget("peer", name);
        sched_.done(name, Clock::now());
        if (o_.once) once[name] = std::move(rounds);
      }
      if (!done.empty()) write_textfile();
      if (o_.once && once.size() == peers_.size()) break;
    }
    for (const auto& p : peers_) {
      if (auto it = once.find(p.name); it != once.end()) {
        rep.rounds.insert(rep.rounds.end(), it->second.begin(), it->second.end());
      }
    }
    rep.peers = names_of(peers_);
    rep.abandoned = drain();
    if (rep.abandoned > 0) {
      say(fmt::format(
          "rdmacheck monitor: stopped with {} round{} in flight, left to their deadline",
          rep.abandoned, rep.abandoned == 1 ? "" : "s"));
    }
    if (http_) http_->stop();
  }

 private:
  void say(const std::string& line) const {
    if (o_.log) o_.log(line);
  }

  void set(std::vector<Peer> peers) {
    peers_ = std::move(peers);
    by_name_.clear();
    for (const auto& p : peers_) by_name_[p.name] = p;
  }

  void reread() {
    auto peers = peers_of(o_);
    if (!peers) {
      say("rdmacheck monitor: SIGHUP: " + peers.error().message() + "; the old peer list stays");
      return;
    }
    std::set<std::string> kept;
    for (const auto& p : *peers) kept.insert(p.name);
    for (const auto& p : peers_) {
      if (kept.count(p.name) == 0) registry_->forget("peer", p.name);
    }
    sched_.set_peers(names_of(*peers), Clock::now());
    set(std::move(*peers));
    say(fmt::format("rdmacheck monitor: SIGHUP: {} peers from {}", peers_.size(), source_of(o_)));
  }

  // --once: every peer, no more than max_in_flight at a time.
  std::vector<std::string> due_once() {
    std::vector<std::string> v;
    const std::lock_guard lock(box_->mu);
    while (!pending_.empty() && box_->running + v.size() < o_.schedule.max_in_flight) {
      v.push_back(pending_.front());
      pending_.pop_front();
    }
    return v;
  }

  void start(const std::vector<std::string>& names) {
    for (const auto& name : names) {
      const auto it = by_name_.find(name);
      if (it == by_name_.end()) continue;
      RoundJob job{it->second, o_.transports, o_.probe, o_.prober, ports_};
      {
        const std::lock_guard lock(box_->mu);
        ++box_->running;
      }
      std::thread([job = std::move(job), r = registry_, b = box_] {
        run_round(job, r, b);
      }).detach();
    }
  }

  // Until a round ends, the scheduler's next wakeup, or 100 ms (stop and
  // reload are looked at that often). With every slot taken a peer that is
  // due waits for a round to end, not for its own time (long past).
  std::vector<std::pair<std::string, std::vector<ProbeResult>>> wait() {
    const auto now = Clock::now();
    auto until = now + std::chrono::milliseconds(100);
    if (!o_.once && sched_.in_flight() < o_.schedule.max_in_flight) {
      until = std::min(until, std::max(now, sched_.next_wakeup()));
    }
    std::unique_lock lock(box_->mu);
    box_->cv.wait_until(lock, until, [&] { return !box_->finished.empty(); });
    return std::exchange(box_->finished, {});
  }

  void write_textfile() {
    if (o_.textfile.empty()) return;
    if (auto s = write_file_atomically(o_.textfile, registry_->exposition()); !s) {
      if (!textfile_failed_) say("rdmacheck monitor: --textfile: " + s.error().message());
      textfile_failed_ = true;
    } else {
      textfile_failed_ = false;
    }
  }

  // After a stop: the rounds in flight get 1.5 s; the count of those left.
  size_t drain() {
    std::unique_lock lock(box_->mu);
    box_->cv.wait_for(lock, std::chrono::milliseconds(1500), [&] { return box_->running == 0; });
    return box_->running;
  }

  const MonitorOptions& o_;
  std::shared_ptr<Registry> registry_;
  std::shared_ptr<Mailbox> box_;
  std::shared_ptr<PortCounterTracker> ports_;
  Scheduler sched_;
  std::vector<Peer> peers_;
  std::map<std::string, Peer> by_name_;
  std::deque<std::string> pending_;
  std::unique_ptr<MetricsServer> http_;
  bool textfile_failed_ = false;
};

}  // namespace

int MonitorReport::exit_status() const {
  int worst = 0;
  for (const auto& r : rounds) {
    if (r.outcome == Outcome::kDown || r.outcome == Outcome::kError) return 2;
    if (r.outcome != Outcome::kUp) worst = 1;
  }
  return worst;
}

Result<MonitorReport> run_monitor(const MonitorOptions& o, const std::atomic<bool>& stop,
                                  std::atomic<bool>& reload) {
  auto peers = peers_of(o);
  if (!peers) return peers.error();
  MonitorReport rep;
  rep.prober = o.prober;
  Loop loop(o, std::move(*peers));
  if (auto s = loop.listen(rep); !s) return s.error();
  loop.run(rep, stop, reload);
  return rep;
}

}  // namespace rdmacheck::monitor
