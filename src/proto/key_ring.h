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
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/secret_file.h"

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
  // Every file of FILES as one ring (a server's --psk-file given more than
  // once); an identity in two of them is an error.
  static Result<KeyRing> load_all(const std::vector<std::string>& files);

  // The key (raw bytes) for IDENTITY, or nullopt: unknown or revoked.
  [[nodiscard]] std::optional<std::string> find(const std::string& identity) const;
  [[nodiscard]] size_t size() const { return keys_.size(); }
  // A client file's one line; nullopt when the ring has another number of keys.
  [[nodiscard]] std::optional<std::pair<std::string, std::string>> only() const;

 private:
  std::map<std::string, std::string> keys_;
};

// A server's key rings as files: loaded at start, re-read on request
// (SIGHUP). Each handshake takes the ring of its moment, so an identity that
// a reload removed is refused from the next handshake on. A reload that
// fails keeps the ring it had: a typo never locks the fleet out.
class KeyRingFiles {
 public:
  static Result<std::shared_ptr<KeyRingFiles>> load(std::vector<std::string> files);
  // Re-reads the files; on success the number of identities now held.
  Result<size_t> reload();
  [[nodiscard]] std::shared_ptr<const KeyRing> current() const;
  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }

 private:
  KeyRingFiles(std::vector<std::string> files, KeyRing ring);
  std::vector<std::string> files_;
  mutable std::mutex mu_;
  std::shared_ptr<const KeyRing> ring_;
};

// 32 fresh random bytes: a key.
std::string fresh_key();

// What `keygen NAME --ring RING` does: a fresh key for IDENTITY appended to
// RING (created 0600 when missing; an existing one must load, and must not
// hold IDENTITY yet), written through a temporary file and a rename. Returns
// the client's line.
Result<std::string> add_to_ring(const std::string& ring, const std::string& identity);

// "IDENTITY HEX\n": a line of a key ring, as `keygen` writes it.
std::string ring_line(const std::string& identity, const std::string& key);

}  // namespace rdmacheck::proto
