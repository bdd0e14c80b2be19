// The server's part of a bw/lat session (`rdmacheck serve`): keep receives
// posted for send/write_imm bandwidth, echo send and write ping-pongs, or
// stay out of the way of one-sided reads, writes and atomics, until the
// client's done message (or the session deadline).
#pragma once

#include <string>

#include "conn/endpoint.h"
#include "net/tcp.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

struct ResponderOutcome {
  std::string outcome = "ok";  // "ok", or what ended the session early
  uint64_t received = 0;       // receives completed
  uint64_t replied = 0;        // messages sent back
};

// Runs until the client's done arrives on SOCK (read and checked here) or END.
// Completion errors go into bye.wc_errors.
ResponderOutcome respond_perf(conn::Endpoint& ep, const proto::Hello& hello, const Fd& sock,
                              Deadline end, proto::Bye& bye);

}  // namespace rdmacheck::perf
