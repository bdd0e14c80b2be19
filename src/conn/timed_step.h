// One QP state change (or any verbs step) timed into a session's timeline:
// how long it took, whether it worked, and why not. Internal to conn/.
#pragma once

#include <chrono>
#include <utility>
#include <vector>

#include "base/deadline.h"
#include "base/result.h"
#include "proto/messages.h"

namespace rdmacheck::conn {

template <typename F>
Status timed_step(std::vector<proto::Step>& timeline, const char* name, F&& f) {
  const auto t0 = Clock::now();
  Status s = f();
  proto::Step step{name, std::chrono::duration<double, std::micro>(Clock::now() - t0).count(),
                   s.ok(), s.ok() ? "" : s.error().message()};
  timeline.push_back(std::move(step));
  return s;
}

}  // namespace rdmacheck::conn
