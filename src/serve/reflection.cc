#include "serve/reflection.h"

#include <fmt/core.h>
#include <strings.h>

#include "net/ip_match.h"
#include "net/tcp.h"

namespace rdmacheck::serve {

std::optional<std::string> ib_reflected(const std::string& hello_gid, const std::string& peer,
                                        const std::optional<Neighbour>& entry,
                                        const std::string& lookup_error) {
  if (!lookup_error.empty()) {
    return fmt::format(
        "refused: the hello names InfiniBand GID {} and this server could not read its "
        "neighbour table to tie it to the client's address {} ({})",
        hello_gid, peer, lookup_error);
  }
  const auto gid = entry ? ipoib_gid(entry->lladdr) : std::nullopt;
  if (!gid) {
    return fmt::format(
        "refused: the hello names InfiniBand GID {}, and nothing ties it to the client's "
        "address {}: that address has no IPoIB neighbour entry here (the control connection "
        "came over another network, such as a management Ethernet, or through a router from "
        "another IPoIB subnet); connect to this server's IPoIB address from the same subnet",
        hello_gid, peer);
  }
  if (::strcasecmp(gid->c_str(), hello_gid.c_str()) == 0) return std::nullopt;
  return fmt::format(
      "refused: the hello names GID {}, but the client's address {} is GID {} on IPoIB (its "
      "neighbour entry): this server connects its QP only back to the host it talks to (a "
      "client on InfiniBand uses its port's first GID: no -x)",
      hello_gid, peer, *gid);
}

std::optional<std::string> reflected(const conn::Endpoint& ep, const proto::Hello& hello,
                                     const Channel& sock) {
  const std::string peer = peer_address(sock);
  const auto ip = parse_ip(peer);
  // InfiniBand (old drivers say "unspecified" for it; iWARP ports say Ethernet).
  if (ep.port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
    if (!ip) return ib_reflected(hello.qp.gid, peer, std::nullopt, "no address");
    auto entry = neighbour_of(*ip);
    if (!entry) return ib_reflected(hello.qp.gid, peer, std::nullopt, entry.error().message());
    return ib_reflected(hello.qp.gid, peer, *entry);
  }
  if (ip && gid_is_address(hello.qp.gid, *ip)) return std::nullopt;
  return fmt::format(
      "refused: the hello names GID {}, which is not the address of this connection's client "
      "({}): this server connects its QP only back to the host it talks to",
      hello.qp.gid, peer);
}

}  // namespace rdmacheck::serve
