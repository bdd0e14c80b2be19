// Why a TLS connection failed (net/tls.h's TlsFault), from what OpenSSL
// queued and what this side of the connection saw. Internal to net/tls.cc;
// a file of its own so that each cause reads as one rule.
#pragma once

#include <string>

#include "net/tls.h"

namespace rdmacheck::detail {

struct TlsFailureFacts {
  int reason = 0;                 // ERR_GET_REASON of OpenSSL's first queued error
  std::string detail;             // every queued error, "; "-separated ("" = none)
  bool handshake = false;         // the handshake had not finished
  bool server = false;            // this side accepted the connection
  bool unknown_identity = false;  // (server) no key for the identity the client named
  bool heard = false;             // any byte from the peer yet
  bool errno_set = false;         // the socket side left an errno
  std::string identity;           // (server) the identity the client named
  std::string own_identity;       // (client) the identity this side offered
};

TlsError classify_tls_failure(const TlsFailureFacts& f, const char* what);

}  // namespace rdmacheck::detail
