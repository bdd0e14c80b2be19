// One direction of one switch port: decides, frame by frame, what the
// switch faults on it do (drop, hold, duplicate, corrupt), and counts it.
// Deterministic for a seed and the times it is given, so the hub's faults
// are unit-tested without a clock or a guest.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "lab/switch_fault.h"

namespace rdmacheck::lab {

// What the switch did on one port and direction.
struct ShaperCounters {
  uint64_t frames = 0;        // frames that reached this port and direction
  uint64_t lost = 0;          // switch-loss and switch-burst-loss
  uint64_t flap_dropped = 0;  // dropped while the port was down (switch-flap)
  uint64_t flaps = 0;         // down periods that dropped at least one frame
  uint64_t size_dropped = 0;  // over switch-maxsize
  uint64_t rate_dropped = 0;  // tail drop: the rate cap's buffer was full
  uint64_t delayed = 0;       // held by switch-delay or switch-rate
  uint64_t duplicated = 0;
  uint64_t corrupted = 0;
  uint64_t reordered = 0;  // held back by switch-reorder
  [[nodiscard]] uint64_t dropped() const {
    return lost + flap_dropped + size_dropped + rate_dropped;
  }
};

struct FrameFate {
  bool drop = false;
  double delay_s = 0;  // hold the frame this long before it goes on
  int copies = 1;
  std::optional<size_t> flip_bit;  // corrupt: the bit to flip (bit 0: first byte's lowest)
};

class Shaper {
 public:
  // The rate cap's port buffer: beyond this many bytes queued, tail drop.
  static constexpr double kRateBufferBytes = 64 * 1024;

  explicit Shaper(uint64_t seed = 1) : rng_(seed) {}
  // F, added at NOW (the T of decide's clock): a flap's phase counts from
  // then, or from its --fault-at second of the run, so that the two
  // directions of a port, each a Shaper, go down and up together.
  void add(const SwitchFault& f, double now = 0);
  void clear() { faults_.clear(); }
  [[nodiscard]] bool empty() const { return faults_.empty(); }
  [[nodiscard]] std::vector<SwitchFault> faults() const;
  // A frame of BYTES arriving at T seconds (any steady origin); RUN_T:
  // seconds since the lab's run began, nullopt before (timed faults wait).
  FrameFate decide(size_t bytes, double t, std::optional<double> run_t);
  [[nodiscard]] const ShaperCounters& counters() const { return c_; }

 private:
  struct State {
    SwitchFault f;
    bool bad = false;               // burst loss: in the lossy state
    double added_at = 0;            // add()'s NOW
    std::optional<double> since;    // when it became active (flap phase)
    double busy_until = 0;          // rate: when the port's queue drains
    int64_t last_down_period = -1;  // flap: the last down period counted
  };
  enum class Act { kPass, kHold, kDrop };  // what one fault does with a frame
  bool drops(State& s, size_t bytes, double t);
  Act transmit(State& s, size_t bytes, double t, FrameFate& fate);
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  bool chance(double percent) { return uniform() * 100 < percent; }
  std::mt19937_64 rng_;
  std::vector<State> faults_;
  ShaperCounters c_;
};

}  // namespace rdmacheck::lab
