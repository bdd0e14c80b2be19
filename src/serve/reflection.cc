#include "serve/reflection.h"

#include <fmt/core.h>

#include "net/ip_match.h"
#include "net/tcp.h"

namespace rdmacheck::serve {

std::optional<std::string> reflected(const conn::Endpoint& ep, const proto::Hello& hello,
                                     const Channel& sock) {
  if (ep.port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) return std::nullopt;
  const std::string peer = peer_address(sock);
  const auto ip = parse_ip(peer);
  if (ip && gid_is_address(hello.qp.gid, *ip)) return std::nullopt;
  return fmt::format(
      "refused: the hello names GID {}, which is not the address of this connection's client "
      "({}): this server connects its QP only back to the host it talks to",
      hello.qp.gid, peer);
}

}  // namespace rdmacheck::serve
