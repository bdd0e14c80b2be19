// `rdmacheck lab`: boots the planned guests, streams their consoles with a
// host prefix, watches the files they write in the lab export, and ends with
// the test's exit status, or 3 when the lab itself failed. Never waits
// forever: a guest that hangs is killed at the deadline and named.
#pragma once

#include <atomic>
#include <cstdio>

#include "lab/plan.h"

namespace rdmacheck::lab {

constexpr int kLabFailed = 3;

int run_lab(const LabOptions& o, const std::atomic<bool>& stop);

}  // namespace rdmacheck::lab
