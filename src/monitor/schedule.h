// When `rdmacheck monitor` probes which peer (#26): every peer once per
// period, with jitter so that a fleet of probers does not probe in
// lock-step, within three bounds that hold whatever the fleet's size: at
// most max_in_flight probes at once, at most max_probes_per_s started per
// second (paced: a token bucket of one), and at most max_peers_per_interval distinct peers
// per interval — beyond that each peer's period stretches, so a prober of
// 1,000 peers probes a rotating part of them each interval, as Pingmesh does.
//
// Pure logic over a caller's clock: the tests drive it with a fake one.
// Its memory is a fixed amount per peer; nothing grows with uptime.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace rdmacheck::monitor {

using Clock = std::chrono::steady_clock;

struct ScheduleOptions {
  std::chrono::milliseconds interval{10000};
  double jitter = 0.1;                 // each period drawn within ±jitter of its length
  size_t max_in_flight = 32;           // probes at once
  double max_probes_per_s = 50;        // probes started per second, all peers together
  size_t max_peers_per_interval = 64;  // distinct peers per interval, beyond it periods stretch
  uint64_t seed = 1;                   // the jitter's random stream (the tests fix it)
};

class Scheduler {
 public:
  Scheduler(std::vector<std::string> peers, const ScheduleOptions& o, Clock::time_point now);

  // The peers to probe now, each marked in flight; those due but over a
  // bound wait for a later call.
  std::vector<std::string> due(Clock::time_point now);
  // PEER's probe ended (answer, loss or timeout); its next probe is one
  // period after this one started. A peer with no probe in flight (removed
  // by set_peers meanwhile) is ignored.
  void done(const std::string& peer, Clock::time_point now);
  // When due() may next return a peer: the earliest next probe, or the
  // moment a token is back. A caller with probes in flight also wakes on done().
  [[nodiscard]] Clock::time_point next_wakeup() const;
  // A new peer list (SIGHUP): peers that stay keep their schedule; new ones
  // are spread over one period from NOW; a removed peer's probe in flight
  // is forgotten (its done() is ignored).
  void set_peers(std::vector<std::string> peers, Clock::time_point now);

  [[nodiscard]] const std::vector<std::string>& peers() const { return peers_; }
  [[nodiscard]] size_t in_flight() const { return in_flight_; }
  // Each peer's period: the interval, stretched when the fleet is larger than
  // max_peers_per_interval.
  [[nodiscard]] std::chrono::milliseconds period() const;

 private:
  struct Peer {
    Clock::time_point next;
    Clock::time_point started;
    bool in_flight = false;
  };
  [[nodiscard]] Clock::duration jittered();
  void spread(std::vector<size_t> which, Clock::time_point now);
  void refill(Clock::time_point now);

  ScheduleOptions o_;
  std::vector<std::string> peers_;
  std::vector<Peer> state_;
  std::unordered_map<std::string, size_t> index_;  // peer -> its place in peers_
  size_t in_flight_ = 0;
  double tokens_ = 0;
  Clock::time_point refilled_;
  std::mt19937_64 rng_;
};

}  // namespace rdmacheck::monitor
