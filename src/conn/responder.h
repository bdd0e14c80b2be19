// The server's side of a test, after the session's endpoint is up: the ping
// echo lives here, beside ping; the bw/lat responder in perf/responder.h.
// Both end on the client's done message (read and checked here) or the
// session deadline, and return the same outcome.
#pragma once

#include <cstdint>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/endpoint.h"
#include "conn/traffic_cap.h"
#include "net/channel.h"
#include "proto/messages.h"

namespace rdmacheck::conn {

struct ResponderOutcome {
  std::string outcome = "ok";  // "ok", or what ended the session early
  uint64_t received = 0;       // receives completed
  uint64_t replied = 0;        // messages sent back
};

// Echoes every message back until the client says done, or TRAFFIC's cap
// ends the echo. Completion errors go into bye.wc_errors; bye.received/replied
// count the echo.
ResponderOutcome respond_ping(Endpoint& ep, const proto::Hello& hello, const Channel& sock,
                              Deadline end, SessionTraffic& traffic, proto::Bye& bye);

// The next completion, or nullopt when the control connection SOCK has a
// frame to read (or closed): a frame TLS already holds counts, though its
// socket shows nothing more.
inline Result<std::optional<ibv_wc>> next_completion_or_frame(Endpoint& ep, Deadline d,
                                                              const Channel& sock) {
  if (sock.buffered()) return std::optional<ibv_wc>{};
  return next_completion(ep, d, sock.fd().get());
}

}  // namespace rdmacheck::conn
