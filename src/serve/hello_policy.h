// What a server decides from a hello alone, before anything is pinned or
// opened: whether it runs the test at all, with which endpoint, and until
// when its session may hold a slot for it.
#pragma once

#include <optional>
#include <string>

#include "base/deadline.h"
#include "conn/endpoint.h"
#include "net/channel.h"
#include "proto/messages.h"
#include "serve/cm_acceptor.h"
#include "serve/server.h"

namespace rdmacheck::serve {

// Why this server will not run the hello's test, or nullopt when it will.
std::optional<std::string> refusal(const proto::Hello& hello, const ServerOptions& o,
                                   const CmAcceptor* acceptor);

// The session's endpoint: this server's device choice, the client's test,
// over the control connection SOCK.
conn::EndpointOptions endpoint_options(const proto::Hello& hello, const ServerOptions& o,
                                       const Channel& sock);

// How long after the hello a client gives its test on top of what it said
// (hello.test.budget_ms): the bye and the server's own explanation.
inline constexpr std::chrono::seconds kBudgetGrace{5};

// When the session of HELLO ends, read at NOW: the client's own budget for
// its test plus kBudgetGrace, never past SESSION_END (serve
// --session-timeout); SESSION_END when the client said none (an older one).
// A ping of a client that vanished holds its slot for seconds, not minutes.
Deadline request_end(const proto::Hello& hello, Deadline session_end, Deadline now);

}  // namespace rdmacheck::serve
