// Who may use a server, settled before the first frame of a session (hello,
// doctor request, TCP echo). The server greets in clear (so that a client
// can tell `rdmacheck serve` from another listener and an old version from
// this one); what follows depends on the greeting's "auth":
//
// "tls-psk" (key rings, proto/key_ring.h): TLS 1.3 with external pre-shared
// keys (net/tls.h) on the same socket, the client naming its identity; every
// frame after it is encrypted and integrity-protected (net/channel.h).
//
// "tls-cert" (certificates, net/tls.h TlsCertContext): mutual TLS 1.3 on the
// same socket; the client checks that the server's certificate names the
// host it dialled, the server that the client's verifies against its CA
// (and CRL); the identity is the client certificate's CN.
//
// "psk" (a raw key file, the older form): a challenge and response, after
// which frames travel in clear:
//
//   server -> client  greeting  {version, auth: "psk"|"none", nonce: NS}
//   client -> server  auth      {nonce: NC, proof: HMAC(K, "rdmacheck-client-v2" NS NC)}
//   server -> client  auth-ok   {proof: HMAC(K, "rdmacheck-server-v2" NS NC)}
//
// HMAC-SHA256; NS and NC are 32 fresh random bytes each; the proofs are bound
// to their direction, so neither side's proof can be replayed as the other's,
// and to both nonces, so no proof is good for a second connection. The key
// never crosses the wire. Refusals are error frames with a "code" (the
// client's finding id). Without a key the greeting says "none" and the
// session goes on unauthenticated.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/enum_table.h"
#include "base/fd.h"
#include "base/result.h"
#include "net/channel.h"
#include "proto/key_ring.h"

namespace rdmacheck::proto {

constexpr size_t kNonceBytes = 32;
constexpr size_t kProofBytes = 32;  // SHA-256
constexpr size_t kMinKeyBytes = 32;
constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxServerKeys = 2;  // the current key and the next one, while rolling

// The greeting's "auth": how the session proves who is at each end (above).
enum class AuthMode { kNone, kPsk, kTlsPsk, kTlsCert };

// Why a session did not get past authentication. The names are the client's
// finding ids and the "code" of the server's refusals.
enum class AuthFailure {
  kNone,
  kKeyFileUnreadable,  // this side's key file: missing, not a file, too short or too long
  kKeyFileUnsafe,      // readable or writable by group or others
  kRequired,           // the server wants a key and this client has none
  kFailed,             // the server did not accept this client's proof
  kServerUnproven,     // the server's proof is wrong: it does not hold this key
  kServerUnkeyed,      // this client has a key and the server runs without one
  kNotAllowed,         // the client's address is not in the server's --allow list
  kProtocol,           // a truncated or replayed message, another version
  kForeign,            // bytes outside rdmacheck's framing, or closed at once
  kSilent,             // no greeting: another service, or rdmacheck before v2
};

using Nonce = std::array<uint8_t, kNonceBytes>;
using Proof = std::array<uint8_t, kProofBytes>;

struct Psk {
  std::string file;  // for messages and the server's log
  std::string key;   // a raw key file's bytes as they are; a ring line's key
  // A ring line's identity (the file is one `IDENTITY HEX` line, as `keygen`
  // writes it): the client meets a "tls-psk" server with it. "" for a raw key.
  std::string identity;
  // Certificate mode instead of a key (--tls-cert): FILE names the certificate.
  TlsCerts certs;
};

struct AuthError {
  AuthFailure kind = AuthFailure::kProtocol;
  Error error;
  bool refused = false;  // the server answered with an error frame without an auth code (busy)
};

// Reads a client's key file: a regular file that neither group nor others may
// read or write (as ssh insists for its keys), either one key ring line
// (`IDENTITY HEX`, the identity filled in) or a raw key of 32..4096 bytes.
// A file of printable text whose first line has a space is taken for a ring
// line, and an error in it is said, not taken for a raw key.
Result<Psk, AuthError> load_psk(const std::string& file);

// Whether FILE holds key ring lines (the server's --psk-file) rather than a
// raw key; its safety is checked when it is loaded.
Result<bool> is_key_ring(const std::string& file);

// What a server holds: raw keys (the clear challenge-response) or a key ring
// (TLS 1.3), never both. RING is read for each handshake: a reload that
// removed an identity refuses it from the next handshake on.
struct ServerKeys {
  std::vector<Psk> raw;
  std::shared_ptr<const KeyRing> ring;
  TlsCerts certs;  // certificate mode, instead of either
  // With a ring: the names (SNI) clients may dial this server by; empty: any.
  // (A certificate proves its names to the client itself.)
  TlsChannel::NameCheck names;
  // With certificates: the identities (certificate CNs) admitted; empty: any
  // the CA signed. (A ring is its own list of identities.)
  std::vector<std::string> identities;
  [[nodiscard]] bool empty() const { return raw.empty() && !ring && !certs; }
};

// Who the client proved to be: the index of the raw key, or the identity of
// its ring line; nothing without keys.
struct Admitted {
  int raw_key = -1;
  std::string identity;
  std::string log_name;  // "key FILE", "identity NAME, TLSv1.3 CIPHER"; "" without keys
};

enum class Side { kClient, kServer };
Proof auth_proof(const std::string& key, Side who, const Nonce& ns, const Nonce& nc);
Nonce fresh_nonce();

// The server's side: greets, and with KEYS demands a proof of one of them;
// with a ring, C carries TLS from then on. A refusal has been sent to the
// client when this fails (with a ring, TLS's own alert).
Result<Admitted, AuthError> greet_client(Channel& c, const ServerKeys& keys, Deadline d);

// The client's side: reads the greeting, proves KEY when the server asks,
// and checks the server's proof; for a "tls-psk" server, the TLS handshake
// with SERVER_NAME (the name it dialled) as SNI, and C carries TLS from then on.
Result<Unit, AuthError> meet_server(Channel& c, const std::optional<Psk>& key,
                                    const std::string& server_name, Deadline d);

// Certificate mode, once met: this client's certificate and the server's
// that are within kRenewDays (net/cert_expiry.h) of their end at NOW, each
// as a sentence with its file or CN, its date and who renews it; empty
// otherwise (and with keys). The client reports them as certificate-expiring.
std::vector<std::string> expiring_certificates(const Channel& c,
                                               std::chrono::system_clock::time_point now);

// An error frame the client turns into the finding CODE.
nlohmann::json refusal_message(AuthFailure code, const std::string& text);

}  // namespace rdmacheck::proto

namespace rdmacheck {
template <>
struct EnumNames<proto::AuthMode> {
  static constexpr std::array<std::pair<proto::AuthMode, std::string_view>, 4> table = {{
      {proto::AuthMode::kNone, "none"},
      {proto::AuthMode::kPsk, "psk"},
      {proto::AuthMode::kTlsPsk, "tls-psk"},
      {proto::AuthMode::kTlsCert, "tls-cert"},
  }};
};
template <>
struct EnumNames<proto::AuthFailure> {
  static constexpr std::array<std::pair<proto::AuthFailure, std::string_view>, 11> table = {{
      {proto::AuthFailure::kNone, "none"},
      {proto::AuthFailure::kKeyFileUnreadable, "auth-key-file-unreadable"},
      {proto::AuthFailure::kKeyFileUnsafe, "auth-key-file-unsafe"},
      {proto::AuthFailure::kRequired, "auth-required"},
      {proto::AuthFailure::kFailed, "auth-failed"},
      {proto::AuthFailure::kServerUnproven, "auth-server-unproven"},
      {proto::AuthFailure::kServerUnkeyed, "auth-server-unkeyed"},
      {proto::AuthFailure::kNotAllowed, "auth-not-allowed"},
      {proto::AuthFailure::kProtocol, "auth-protocol"},
      {proto::AuthFailure::kForeign, "not-rdmacheck-serve"},
      {proto::AuthFailure::kSilent, "no-greeting"},
  }};
};
}  // namespace rdmacheck
