// Per-client keys for TLS 1.3 (net/tls.h): a key ring file holds one
// `IDENTITY KEY` per line (KEY: 64 or more hex digits, 32+ bytes), so each
// client has its own key and removing its line revokes it. A client's file is
// the same with one line. Blank lines and lines starting with '#' are
// comments.
//
// Keys too weak to keep a recorded handshake safe offline are refused: fewer
// than 32 bytes, or fewer than 16 distinct byte values (a typed "aaaa…").
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/result.h"

namespace rdmacheck::proto {

constexpr size_t kMinRingKeyBytes = 32;
constexpr size_t kMinDistinctKeyBytes = 16;
constexpr size_t kMaxIdentityLength = 128;
constexpr size_t kMaxRingBytes = 1 << 20;  // about 6,000 identities

// Why KEY is too weak to use, or nullopt.
std::optional<std::string> weak_key(const std::string& key);

// What an identity may be: a host name, an address, a user@host.
bool valid_identity(const std::string& identity);

class KeyRing {
 public:
  // The ring in TEXT; SOURCE names it in errors ("/etc/rdmacheck/ring:3: ...").
  static Result<KeyRing> parse(const std::string& text, const std::string& source);
  // Reads FILE: a regular file that neither group nor others may read or
  // write, except where systemd handed it over ($CREDENTIALS_DIRECTORY owns
  // its mode and ACL).
  static Result<KeyRing> load(const std::string& file);

  // The key (raw bytes) for IDENTITY, or nullopt: unknown or revoked.
  [[nodiscard]] std::optional<std::string> find(const std::string& identity) const;
  [[nodiscard]] size_t size() const { return keys_.size(); }
  // A client file's one line; nullopt when the ring has another number of keys.
  [[nodiscard]] std::optional<std::pair<std::string, std::string>> only() const;

 private:
  std::map<std::string, std::string> keys_;
};

// "IDENTITY HEX\n": a line of a key ring, as `keygen` writes it.
std::string ring_line(const std::string& identity, const std::string& key);

}  // namespace rdmacheck::proto
