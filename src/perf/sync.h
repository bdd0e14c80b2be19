// Barriers between the client and the server of a bw/lat test, over each
// queue pair's control connection (proto::Sync). While a side waits for the
// other it keeps its receives posted, so a bidirectional send test never
// stalls the peer's last messages behind an empty receive queue.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "conn/endpoint.h"
#include "net/channel.h"
#include "proto/messages.h"

namespace rdmacheck::perf {

// Waits until SOCK has a frame (servicing EPS' completion queues meanwhile)
// and reads it. Gives up at D.
Result<nlohmann::json> await_frame(const Channel& sock, std::span<conn::Endpoint* const> eps,
                                   Deadline d);

// The client's half of a barrier: sends MSGS[i] on SOCKS[i], then waits for
// each server's sync of the same step and phase. An error message from a
// server, or anything else, ends the wait with that server's words.
Result<std::vector<proto::Sync>> exchange_sync(std::span<const Channel* const> socks,
                                               std::span<conn::Endpoint* const> eps,
                                               const std::vector<proto::Sync>& msgs, Deadline d);

}  // namespace rdmacheck::perf
