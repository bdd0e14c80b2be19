// Why a TLS connection failed (net/tls.h's TlsFault), from what OpenSSL
// queued and what this side of the connection saw. Internal to net/tls.cc;
// a file of its own so that each cause reads as one rule.
#pragma once

#include <openssl/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "net/tls.h"

namespace rdmacheck::detail {

struct TlsFailureFacts {
  int reason = 0;                 // ERR_GET_REASON of OpenSSL's first queued error
  std::string detail;             // every queued error, "; "-separated ("" = none)
  bool handshake = false;         // the handshake had not finished
  bool server = false;            // this side accepted the connection
  bool unknown_identity = false;  // (server) no key for the identity the client named
  bool wrong_name = false;        // (server) the client dialled a name it does not answer to
  bool heard = false;             // any byte from the peer yet
  bool errno_set = false;         // the socket side left an errno
  std::string identity;           // (server) the identity the client named
  std::string own_identity;       // (client) the identity this side offered
  bool certificates = false;      // certificate mode (mutual TLS), not key rings
  long verify = 0;                // SSL_get_verify_result: why the peer's certificate failed
  std::string server_name;        // the name the client dialled (SNI)
};

TlsError classify_tls_failure(const TlsFailureFacts& f, const char* what);

// Certificate mode (net/tls_cert.cc): the peer certificate's subject CN, and
// the name (or address) the server's certificate must hold, and when the
// peer's certificate ends.
std::string peer_common_name(SSL* ssl);
std::optional<std::chrono::system_clock::time_point> peer_not_after(SSL* ssl);
bool expect_server_name(SSL* ssl, const std::string& name);

}  // namespace rdmacheck::detail
