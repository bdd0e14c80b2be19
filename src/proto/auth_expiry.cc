#include <fmt/core.h>

#include "net/cert_expiry.h"
#include "proto/auth.h"

namespace rdmacheck::proto {

std::vector<std::string> expiring_certificates(const Channel& c,
                                               std::chrono::system_clock::time_point now) {
  std::vector<std::string> out;
  const TlsChannel* tls = c.tls();
  if (tls == nullptr || !tls->certs()) return out;
  const TlsCertContext& own = *tls->certs();
  if (const auto e = cert_expiry(own.not_after(), now)) {
    out.push_back(fmt::format("this client's certificate {} (CN {}) {}: renew it here",
                              own.files().cert, own.subject(), e->text));
  }
  const auto peer_end = tls->peer_not_after();
  if (const auto e = peer_end ? cert_expiry(*peer_end, now) : std::nullopt) {
    out.push_back(fmt::format(
        "the server's certificate (CN {}) {}: renew it there (serve re-reads it on SIGHUP)",
        tls->identity(), e->text));
  }
  return out;
}

}  // namespace rdmacheck::proto
