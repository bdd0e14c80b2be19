// RLIMIT_MEMLOCK as /proc/PID/limits shows it, and CAP_IPC_LOCK (which lifts it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rdmacheck::doctor {

struct MemlockLimit {
  std::optional<uint64_t> soft;  // bytes; nullopt = unlimited
  std::optional<uint64_t> hard;
};

// The "Max locked memory" line of /proc/PID/limits; nullopt when absent.
std::optional<MemlockLimit> parse_memlock(const std::string& limits);
// CapEff of /proc/PID/status has CAP_IPC_LOCK (bit 14); nullopt when unreadable.
std::optional<bool> has_ipc_lock(const std::string& status);

// Below this, registering ordinary benchmark and MPI buffers fails (EPERM/ENOMEM).
constexpr uint64_t kMemlockMinBytes = 64ull << 20;

std::string bytes_text(std::optional<uint64_t> b);  // "8 MiB", "unlimited"

}  // namespace rdmacheck::doctor
