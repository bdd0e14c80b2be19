// Who a session's QP may reach: only the host at the other end of its
// control connection, so that no hello can aim the server's RDMA traffic at
// a third host (a reflector hiding the source). docs/serve.md: "No reflection".
#pragma once

#include <optional>
#include <string>

#include "conn/endpoint.h"
#include "net/channel.h"
#include "proto/messages.h"

namespace rdmacheck::serve {

// Why the hello's QP is not one this server may connect to, or nullopt. A
// RoCE GID is an IP address: it must be the address of SOCK's peer.
// InfiniBand GIDs are not IP addresses and are not checked.
std::optional<std::string> reflected(const conn::Endpoint& ep, const proto::Hello& hello,
                                     const Channel& sock);

}  // namespace rdmacheck::serve
