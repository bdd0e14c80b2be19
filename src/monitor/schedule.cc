#include "monitor/schedule.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace rdmacheck::monitor {
namespace {

// The bucket holds one probe: starts are paced at least 1/rate apart, so no
// second (of any start) holds more than the rate, and a quiet spell is never
// followed by a burst.
double bucket_size(const ScheduleOptions& /*o*/) { return 1.0; }

// A peer listed twice is probed once, at its first place.
std::vector<std::string> unique(std::vector<std::string> peers) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (auto& p : peers) {
    if (seen.insert(p).second) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Scheduler::Scheduler(std::vector<std::string> peers, const ScheduleOptions& o,
                     Clock::time_point now)
    : o_(o),
      peers_(unique(std::move(peers))),
      tokens_(bucket_size(o)),
      refilled_(now),
      rng_(o.seed) {
  o_.max_in_flight = std::max<size_t>(1, o_.max_in_flight);
  o_.max_peers_per_interval = std::max<size_t>(1, o_.max_peers_per_interval);
  o_.jitter = std::clamp(o_.jitter, 0.0, 0.5);
  state_.resize(peers_.size());
  std::vector<size_t> all(peers_.size());
  for (size_t i = 0; i < all.size(); ++i) {
    all[i] = i;
    index_.emplace(peers_[i], i);
  }
  spread(std::move(all), now);
}

std::chrono::milliseconds Scheduler::period() const {
  const size_t n = std::max<size_t>(1, peers_.size());
  const double stretch =
      std::max(1.0, static_cast<double>(n) / static_cast<double>(o_.max_peers_per_interval));
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::ceil(static_cast<double>(o_.interval.count()) * stretch)));
}

Clock::duration Scheduler::jittered() {
  const auto p = std::chrono::duration_cast<Clock::duration>(period());
  if (o_.jitter <= 0) return p;
  std::uniform_real_distribution<double> u(1.0 - o_.jitter, 1.0 + o_.jitter);
  return std::chrono::duration_cast<Clock::duration>(p * u(rng_));
}

// WHICH peers start spread evenly over one period from NOW, in a shuffled
// order: a peer list sorted by rack does not become a sweep of one rack.
void Scheduler::spread(std::vector<size_t> which, Clock::time_point now) {
  if (which.empty()) return;
  std::shuffle(which.begin(), which.end(), rng_);
  const auto p = std::chrono::duration_cast<Clock::duration>(period());
  const auto n = static_cast<int64_t>(which.size());
  for (int64_t k = 0; k < n; ++k) state_[which[static_cast<size_t>(k)]].next = now + p * k / n;
}

void Scheduler::refill(Clock::time_point now) {
  if (now <= refilled_) return;
  const double s = std::chrono::duration<double>(now - refilled_).count();
  tokens_ = std::min(bucket_size(o_), tokens_ + s * o_.max_probes_per_s);
  refilled_ = now;
}

std::vector<std::string> Scheduler::due(Clock::time_point now) {
  refill(now);
  std::vector<size_t> ready;
  for (size_t i = 0; i < state_.size(); ++i) {
    if (!state_[i].in_flight && state_[i].next <= now) ready.push_back(i);
  }
  // The most overdue first, so that a bound delays every peer alike.
  std::sort(ready.begin(), ready.end(),
            [&](size_t a, size_t b) { return state_[a].next < state_[b].next; });
  std::vector<std::string> out;
  for (const size_t i : ready) {
    if (in_flight_ >= o_.max_in_flight || tokens_ < 1.0) break;
    tokens_ -= 1.0;
    ++in_flight_;
    state_[i].in_flight = true;
    state_[i].started = now;
    out.push_back(peers_[i]);
  }
  return out;
}

void Scheduler::done(const std::string& peer, Clock::time_point now) {
  const auto it = index_.find(peer);
  if (it == index_.end()) return;
  const size_t i = it->second;
  if (!state_[i].in_flight) return;
  state_[i].in_flight = false;
  --in_flight_;
  // One period after the probe started; a probe that took longer than that
  // (a dead peer's timeout) is followed at once, never by a burst.
  state_[i].next = std::max(state_[i].started + jittered(), now);
}

Clock::time_point Scheduler::next_wakeup() const {
  auto t = Clock::time_point::max();
  for (const auto& p : state_) {
    if (!p.in_flight) t = std::min(t, p.next);
  }
  if (t != Clock::time_point::max() && tokens_ < 1.0) {
    const double wait = (1.0 - tokens_) / o_.max_probes_per_s;
    t = std::max(t, refilled_ + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(wait)));
  }
  return t;
}

void Scheduler::set_peers(std::vector<std::string> peers, Clock::time_point now) {
  std::unordered_map<std::string, Peer> kept;
  for (size_t i = 0; i < peers_.size(); ++i) kept.emplace(peers_[i], state_[i]);
  peers_ = unique(std::move(peers));
  state_.assign(peers_.size(), Peer{});
  index_.clear();
  in_flight_ = 0;
  std::vector<size_t> fresh;
  for (size_t i = 0; i < peers_.size(); ++i) {
    index_.emplace(peers_[i], i);
    if (auto it = kept.find(peers_[i]); it != kept.end()) {
      state_[i] = it->second;
      if (state_[i].in_flight) ++in_flight_;
    } else {
      fresh.push_back(i);
    }
  }
  spread(std::move(fresh), now);
}

}  // namespace rdmacheck::monitor
