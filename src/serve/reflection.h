// Who a session's QP may reach: only the host at the other end of its
// control connection, so that no hello can aim the server's RDMA traffic at
// a third host (a reflector hiding the source). docs/serve.md: "No reflection".
#pragma once

#include <optional>
#include <string>

#include "conn/endpoint.h"
#include "net/channel.h"
#include "net/neighbour.h"
#include "proto/messages.h"

namespace rdmacheck::serve {

// Why the hello's QP is not one this server may connect to, or nullopt. A
// RoCE GID is an IP address: it must be the address of SOCK's peer. On
// InfiniBand the peer's IPoIB neighbour entry carries its port GID: the
// hello's must be that one (ib_reflected).
std::optional<std::string> reflected(const conn::Endpoint& ep, const proto::Hello& hello,
                                     const Channel& sock);

// The InfiniBand rule on its own: HELLO_GID against PEER's neighbour entry
// (nullopt: this host has none for PEER; LOOKUP_ERROR: the table could not
// be read). An entry that is not IPoIB (not 20 bytes), or none, means the
// control connection does not run over IPoIB and nothing ties the GID to
// the client: refused too, with how to connect instead.
std::optional<std::string> ib_reflected(const std::string& hello_gid, const std::string& peer,
                                        const std::optional<Neighbour>& entry,
                                        const std::string& lookup_error = "");

}  // namespace rdmacheck::serve
