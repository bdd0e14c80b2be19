// Every wait in rdmacheck has a deadline: a point on the steady clock.
#pragma once

#include <chrono>

namespace rdmacheck {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_in(std::chrono::milliseconds ms) { return Clock::now() + ms; }
// Milliseconds left before the deadline, clamped to [0, INT_MAX] for poll().
int ms_left(Deadline d);

}  // namespace rdmacheck
