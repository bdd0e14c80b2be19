// The server's part of a bw/lat session (`rdmacheck serve`): keep receives
// posted for send/write_imm bandwidth, echo send and write ping-pongs, or
// stay out of the way of one-sided reads, writes and atomics, until the
// client's done message (or the session deadline).
#pragma once

#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/endpoint.h"
#include "conn/responder.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

using conn::ResponderOutcome;

// Runs until the client's done arrives on SOCK (read and checked here) or END.
// What the server sends itself (echoes, -b's direction) is charged to TRAFFIC
// and stops at its cap. Completion errors go into bye.wc_errors.
ResponderOutcome respond_perf(conn::Endpoint& ep, const proto::Hello& hello, const Channel& sock,
                              Deadline end, conn::SessionTraffic& traffic, proto::Bye& bye);

}  // namespace rdmacheck::perf
