#include "lab/shaper.h"

#include <algorithm>
#include <cmath>

namespace rdmacheck::lab {

namespace {

// Where a fault acts on a frame's way through a switch: admission (size,
// link state, loss), the egress queue (rate), then the wire (corruption,
// duplication, delay and reordering).
int stage(SwitchFaultKind k) {
  switch (k) {
    case SwitchFaultKind::kMaxSize:
      return 0;
    case SwitchFaultKind::kFlap:
      return 1;
    case SwitchFaultKind::kLoss:
      return 2;
    case SwitchFaultKind::kBurstLoss:
      return 3;
    case SwitchFaultKind::kRate:
      return 4;
    case SwitchFaultKind::kCorrupt:
      return 5;
    case SwitchFaultKind::kDup:
      return 6;
    case SwitchFaultKind::kDelay:
      return 7;
    case SwitchFaultKind::kReorder:
      return 8;
  }
  return 9;
}

}  // namespace

void Shaper::add(const SwitchFault& f, double now) {
  const auto at = std::upper_bound(faults_.begin(), faults_.end(), stage(f.kind),
                                   [](int st, const State& s) { return st < stage(s.f.kind); });
  faults_.insert(at, State{.f = f, .added_at = now});
}

std::vector<SwitchFault> Shaper::faults() const {
  std::vector<SwitchFault> out;
  out.reserve(faults_.size());
  for (const auto& s : faults_) out.push_back(s.f);
  return out;
}

// Admission: size, link state and loss. True when S drops the frame.
bool Shaper::drops(State& s, size_t bytes, double t) {
  switch (s.f.kind) {
    case SwitchFaultKind::kMaxSize:
      if (bytes <= s.f.max_bytes) return false;
      ++c_.size_dropped;
      return true;
    case SwitchFaultKind::kFlap: {
      const double phase = t - *s.since;
      const auto period = static_cast<int64_t>(std::floor(phase / s.f.period_s));
      if (phase - static_cast<double>(period) * s.f.period_s >= s.f.down_s) return false;
      if (period != s.last_down_period) ++c_.flaps;
      s.last_down_period = period;
      ++c_.flap_dropped;
      return true;
    }
    case SwitchFaultKind::kLoss:
      if (!chance(s.f.percent)) return false;
      ++c_.lost;
      return true;
    case SwitchFaultKind::kBurstLoss: {
      // Gilbert: every frame in the bad state is lost, none in the good
      // one; leaving the bad state has probability 1/BURST, entering it
      // p with p / (p + 1/BURST) = PCT.
      const double r = 1 / s.f.burst;
      const double loss = s.f.percent / 100;
      const double p = r * loss / (1 - loss);
      s.bad = s.bad ? uniform() >= r : uniform() < p;
      if (!s.bad) return false;
      ++c_.lost;
      return true;
    }
    default:
      return false;
  }
}

// The egress queue and the wire: rate, corruption, duplication, delay and
// reordering, written into FATE.
Shaper::Act Shaper::transmit(State& s, size_t bytes, double t, FrameFate& fate) {
  switch (s.f.kind) {
    case SwitchFaultKind::kRate: {
      const double bytes_per_s = s.f.mbit * 1e6 / 8;
      const double start = std::max(t, s.busy_until);
      if ((start - t) * bytes_per_s + static_cast<double>(bytes) > kRateBufferBytes) {
        ++c_.rate_dropped;
        return Act::kDrop;
      }
      s.busy_until = start + static_cast<double>(bytes) / bytes_per_s;
      fate.delay_s += s.busy_until - t;
      return Act::kHold;
    }
    case SwitchFaultKind::kCorrupt:
      if (chance(s.f.percent) && bytes > 0) {
        const size_t first = bytes > 14 ? 14 * 8 : 0;  // past the Ethernet header
        const size_t n = bytes * 8 - first;
        fate.flip_bit = first + static_cast<size_t>(uniform() * static_cast<double>(n)) % n;
        ++c_.corrupted;
      }
      return Act::kPass;
    case SwitchFaultKind::kDup:
      if (chance(s.f.percent)) {
        fate.copies = 2;
        ++c_.duplicated;
      }
      return Act::kPass;
    case SwitchFaultKind::kDelay: {
      const double d = s.f.ms + (uniform() * 2 - 1) * s.f.jitter_ms;
      fate.delay_s += std::max(0.0, d) / 1000;
      return Act::kHold;
    }
    case SwitchFaultKind::kReorder:
      if (chance(s.f.percent)) {
        fate.delay_s += s.f.ms / 1000;
        ++c_.reordered;
      }
      return Act::kPass;
    default:
      return Act::kPass;
  }
}

// faults_ is in stage order, so a frame meets them as in a switch.
FrameFate Shaper::decide(size_t bytes, double t, std::optional<double> run_t) {
  ++c_.frames;
  FrameFate fate;
  bool held = false;
  for (auto& s : faults_) {
    if (!s.f.active_at(run_t)) {
      s.since.reset();
      continue;
    }
    // Not the first frame's time: each direction sees its first at another
    // moment, and a port's two directions would flap out of phase.
    if (!s.since) s.since = s.f.at_s && run_t ? t - *run_t + *s.f.at_s : s.added_at;
    const Act a = drops(s, bytes, t) ? Act::kDrop : transmit(s, bytes, t, fate);
    if (a == Act::kDrop) {
      fate.drop = true;
      return fate;
    }
    held = held || a == Act::kHold;
  }
  if (held && fate.delay_s > 0) ++c_.delayed;
  return fate;
}

}  // namespace rdmacheck::lab
