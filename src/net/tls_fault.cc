#include "net/tls_fault.h"

#include <fmt/core.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

namespace rdmacheck::detail {
namespace {

// Reasons OpenSSL gives for bytes that are not TLS records.
bool is_not_tls(int reason) {
  switch (reason) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_UNKNOWN_PROTOCOL:
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_WRONG_SSL_VERSION:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_UNEXPECTED_RECORD:
      return true;
    default:
      return false;
  }
}

// Alerts a server sends when it refuses a client's certificate.
bool certificate_refused(int reason) {
  switch (reason) {
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return true;
    default:
      return false;
  }
}

// Why this side did not accept the peer's certificate (or its absence).
TlsError unverified(const TlsFailureFacts& f, const char* what) {
  const std::string why = X509_verify_cert_error_string(f.verify);
  std::string text;
  if (f.server) {
    text = f.reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE
               ? "the client sent no certificate (give it --tls-cert and --tls-key)"
               : fmt::format("the client's certificate does not verify: {}", why);
  } else if (f.verify == X509_V_ERR_HOSTNAME_MISMATCH ||
             f.verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    text = fmt::format(
        "the server's certificate does not name '{}', the host dialled: connect by a name it "
        "holds, or give the server a certificate that holds this one",
        f.server_name);
  } else {
    text = fmt::format("the server's certificate does not verify against --tls-ca: {}", why);
  }
  return TlsError{TlsFault::kUnverified, plain_error(what, text)};
}

}  // namespace

TlsError classify_tls_failure(const TlsFailureFacts& f, const char* what) {
  auto err = [&](TlsFault fault, const std::string& why) {
    return TlsError{fault,
                    plain_error(what, why + (f.detail.empty() ? "" : " (" + f.detail + ")"))};
  };
  if (f.server && f.wrong_name) {  // refused before any key was looked at
    return TlsError{
        TlsFault::kWrongName,
        plain_error(what, fmt::format("the client dialled '{}', a name this server does not "
                                      "answer to (serve --server-name, and its own addresses): "
                                      "a relay from another server, DNS pointing here, or a name "
                                      "the server was not given",
                                      f.server_name))};
  }
  if (!f.server && f.reason == SSL_R_TLSV1_UNRECOGNIZED_NAME) {
    return err(TlsFault::kWrongName,
               fmt::format("the server does not answer to '{}', the name dialled (serve "
                           "--server-name): the connection reached another server (a relay, or "
                           "DNS), or that server was not given this name",
                           f.server_name));
  }
  if (f.server &&
      f.unknown_identity) {  // OpenSSL's reason (no certificate to fall back on) is noise
    return TlsError{TlsFault::kUnknownIdentity,
                    plain_error(what, fmt::format("the client named identity '{}', which this "
                                                  "server holds no key for (unknown, or revoked)",
                                                  f.identity))};
  }
  if (f.certificates && (f.reason == SSL_R_CERTIFICATE_VERIFY_FAILED ||
                         f.reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)) {
    return unverified(f, what);
  }
  if (f.certificates && !f.server && certificate_refused(f.reason)) {
    return err(TlsFault::kRefused,
               "the server refused this client's certificate (another CA, expired or revoked); "
               "the server's log says which");
  }
  if (f.reason == SSL_R_BINDER_DOES_NOT_VERIFY) {
    return err(TlsFault::kKeyMismatch,
               fmt::format("the client's key for identity '{}' is not this server's", f.identity));
  }
  if (f.reason == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC) {
    return err(TlsFault::kTampered,
               "a TLS record failed its integrity check: it was changed on the path");
  }
  if (f.reason == SSL_R_SSLV3_ALERT_BAD_RECORD_MAC) {
    return err(TlsFault::kTampered,
               "the peer found a TLS record of this side's changed on the path (its alert: "
               "bad_record_mac)");
  }
  if (is_not_tls(f.reason)) {
    // After the handshake, records that no longer parse (a header or a
    // length changed) are the stream corrupted on the path, as a failed MAC is.
    if (!f.handshake) {
      return err(TlsFault::kTampered,
                 "the TLS record stream no longer parses: it was changed on the path");
    }
    return err(TlsFault::kNotTls,
               f.heard ? "the peer does not speak TLS" : "the peer's first bytes are not TLS");
  }
  if (!f.server && f.handshake &&
      (f.reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ||
       f.reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
       f.reason == SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER)) {
    return err(TlsFault::kRefused,
               fmt::format("the server refused identity '{}': it holds no key for it (unknown, or "
                           "revoked) or another key; the server's log says which",
                           f.own_identity));
  }
  if (f.reason == SSL_R_UNEXPECTED_EOF_WHILE_READING || (f.detail.empty() && !f.errno_set)) {
    return err(TlsFault::kClosed, "the peer closed the connection without TLS's close");
  }
  return err(TlsFault::kProtocol, f.handshake ? "the TLS handshake failed" : "TLS failed");
}

}  // namespace rdmacheck::detail
