// Who may use a server: a pre-shared key proven by challenge and response
// before the first frame of a session (hello, doctor request, TCP echo).
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
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/enum_table.h"
#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck::proto {

constexpr size_t kNonceBytes = 32;
constexpr size_t kProofBytes = 32;  // SHA-256
constexpr size_t kMinKeyBytes = 16;
constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxServerKeys = 2;  // the current key and the next one, while rolling

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
  std::string key;   // the file's bytes, as they are
};

struct AuthError {
  AuthFailure kind = AuthFailure::kProtocol;
  Error error;
  bool refused = false;  // the server answered with an error frame without an auth code (busy)
};

// Reads a key file: a regular file of 16..4096 bytes that neither group nor
// others may read or write (as ssh insists for its keys).
Result<Psk, AuthError> load_psk(const std::string& file);

enum class Side { kClient, kServer };
Proof auth_proof(const std::string& key, Side who, const Nonce& ns, const Nonce& nc);
Nonce fresh_nonce();

// The server's side: greets, and with KEYS demands a proof of one of them.
// Returns the index of the key the client proved (-1 without keys). A refusal
// has been sent to the client when this fails.
Result<int, AuthError> greet_client(const Fd& sock, const std::vector<Psk>& keys, Deadline d);

// The client's side: reads the greeting, proves KEY when the server asks,
// and checks the server's proof.
Result<Unit, AuthError> meet_server(const Fd& sock, const std::optional<Psk>& key, Deadline d);

// An error frame the client turns into the finding CODE.
nlohmann::json refusal_message(AuthFailure code, const std::string& text);

}  // namespace rdmacheck::proto

namespace rdmacheck {
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
