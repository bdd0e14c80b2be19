// TCP with a deadline on every wait: connect, accept, and framed messages
// (4-byte big-endian length + JSON text, size-capped).
#pragma once

#include <netdb.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck {

// Frames larger than this are refused before any allocation.
constexpr uint32_t kMaxFrame = 64 * 1024;

// HOST's addresses for PORT, as getaddrinfo lists them (owned).
struct AddrList {
  struct Free {
    void operator()(addrinfo* a) const noexcept;
  };
  std::string host;
  uint16_t port = 0;
  std::unique_ptr<addrinfo, Free> list;
};
Result<AddrList> resolve_host(const std::string& host, uint16_t port);

// Connects to the first address that answers within the deadline. The Error's
// errnum tells refused (ECONNREFUSED) from unreachable / timed out.
Result<Fd> tcp_connect(const AddrList& addrs, Deadline d);
// resolve_host, then tcp_connect.
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

// Why a frame could not be read, for a caller that must tell a peer that
// speaks the framing (another rdmacheck) from one that does not (another
// service on the port).
enum class FrameFault {
  kIo,         // a socket error, or a frame cut short after its length
  kTimedOut,   // nothing (or less than a length) before the deadline
  kClosed,     // the peer closed before the first length was complete
  kNotAFrame,  // bytes that are not a length and a JSON object: another protocol
};
struct FrameError {
  FrameFault fault = FrameFault::kIo;
  Error error;
};
// recv_frame, with the fault typed.
Result<nlohmann::json, FrameError> read_frame(const Fd& fd, Deadline d, uint32_t max = kMaxFrame);

// The local address the kernel would use to reach the connected peer, and the peer's.
std::string local_address(const Fd& fd);
std::string peer_address(const Fd& fd);
// ADDRESS and PORT as one string: "198.18.0.2:40112", "[fd00::2]:40112".
std::string format_endpoint(const std::string& address, uint16_t port);
// The local port of a bound socket (after binding port 0).
uint16_t local_port(const Fd& fd);

}  // namespace rdmacheck
