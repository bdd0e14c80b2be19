// TCP with a deadline on every wait: connect, accept, and framed messages
// (4-byte big-endian length + JSON text, size-capped).
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace rdmacheck {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

inline Deadline deadline_in(std::chrono::milliseconds ms) { return Clock::now() + ms; }
// Milliseconds left before the deadline, clamped to [0, INT_MAX] for poll().
int ms_left(Deadline d);

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

// Frames larger than this are refused before any allocation.
constexpr uint32_t kMaxFrame = 64 * 1024;

// Resolves HOST (name or address) and connects within the deadline. The Error's
// errnum tells refused (ECONNREFUSED) from unreachable / timed out.
Result<Fd> tcp_connect(const std::string& host, uint16_t port, Deadline d);
// Listens on ADDR:PORT ("" = all addresses, IPv6 and IPv4).
Result<Fd> tcp_listen(const std::string& addr, uint16_t port, int backlog = 64);
// Waits for a connection until the deadline (ETIMEDOUT) ; peer gets "host:port".
Result<Fd> tcp_accept(const Fd& listener, Deadline d, std::string* peer);

Status send_frame(const Fd& fd, const nlohmann::json& msg, Deadline d);
// The checks recv_frame applies, as pure functions (the fuzz target drives them).
Status check_frame_length(uint32_t n, uint32_t max = kMaxFrame);
Result<nlohmann::json> decode_frame_body(const std::string& body);

// Reads one frame; rejects oversize lengths, truncated frames and invalid JSON.
Result<nlohmann::json> recv_frame(const Fd& fd, Deadline d, uint32_t max = kMaxFrame);

// The local address the kernel would use to reach the connected peer, and the peer's.
std::string local_address(const Fd& fd);
std::string peer_address(const Fd& fd);
// The local port of a bound socket (after binding port 0).
uint16_t local_port(const Fd& fd);

}  // namespace rdmacheck
