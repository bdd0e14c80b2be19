#include "proto/key_ring.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bitset>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "base/atomic_file.h"
#include "base/fd.h"

namespace rdmacheck::proto {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]);
    const int lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace

std::optional<std::string> weak_key(const std::string& key) {
  if (key.size() < kMinRingKeyBytes) {
    return fmt::format("{} bytes of key, at least {} are needed", key.size(), kMinRingKeyBytes);
  }
  std::bitset<256> seen;
  for (const char c : key) seen.set(static_cast<unsigned char>(c));
  if (seen.count() < kMinDistinctKeyBytes) {
    return fmt::format("only {} distinct byte values in {} bytes: not a random key", seen.count(),
                       key.size());
  }
  return std::nullopt;
}

bool valid_identity(const std::string& identity) {
  if (identity.empty() || identity.size() > kMaxIdentityLength) return false;
  for (const char c : identity) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == '@' || c == ':';
    if (!ok) return false;
  }
  return true;
}

Result<KeyRing> KeyRing::parse(const std::string& text, const std::string& source) {
  KeyRing ring;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto at = [&](const std::string& why) {
      return plain_error("key ring", fmt::format("{}:{}: {}", source, n, why));
    };
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream fields(line);
    std::string identity;
    std::string hex;
    std::string extra;
    fields >> identity >> hex;
    if (hex.empty()) return at("a line is 'IDENTITY KEY' (rdmacheck keygen writes one)");
    if (fields >> extra) return at("more than an identity and a key on the line");
    if (!valid_identity(identity)) {
      return at(
          fmt::format("identity '{}' is not a host name, an address or user@host (letters, "
                      "digits, . - _ @ :, at most {})",
                      identity.substr(0, 40), kMaxIdentityLength));
    }
    auto key = from_hex(hex);
    if (!key) return at(fmt::format("the key of '{}' is not hex digits", identity));
    if (auto weak = weak_key(*key)) {
      return at(fmt::format("the key of '{}' is too weak: {} (rdmacheck keygen makes one)",
                            identity, *weak));
    }
    if (!ring.keys_.emplace(identity, std::move(*key)).second) {
      return at(fmt::format("identity '{}' has a second key", identity));
    }
  }
  if (ring.keys_.empty()) return plain_error("key ring", source + " holds no key");
  return ring;
}

Result<KeyRing> KeyRing::load(const std::string& file) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return errno_error("open", file);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("fstat", file);
  if (!S_ISREG(st.st_mode)) return plain_error("key ring", file + " is not a file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0 && !is_systemd_credential(file)) {
    return plain_error(
        "key ring", fmt::format("{} is accessible by group or others (mode {:04o}): chmod 600 {}",
                                file, st.st_mode & 07777, file));
  }
  if (st.st_size > static_cast<off_t>(kMaxRingBytes)) {
    return plain_error("key ring", fmt::format("{} holds {} bytes, more than a key ring's {}", file,
                                               st.st_size, kMaxRingBytes));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error("read", file);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return parse(text, file);
}

Result<KeyRing> KeyRing::load_all(const std::vector<std::string>& files) {
  KeyRing all;
  for (const auto& f : files) {
    auto one = load(f);
    if (!one) return one.error();
    for (auto& [identity, key] : one->keys_) {
      if (!all.keys_.emplace(identity, std::move(key)).second) {
        return plain_error(
            "key ring",
            fmt::format("identity '{}' is in {} and in an earlier key ring", identity, f));
      }
    }
  }
  if (all.keys_.empty()) return plain_error("key ring", "no key ring given");
  return all;
}

std::optional<std::string> KeyRing::find(const std::string& identity) const {
  auto it = keys_.find(identity);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::pair<std::string, std::string>> KeyRing::only() const {
  if (keys_.size() != 1) return std::nullopt;
  return *keys_.begin();
}

KeyRingFiles::KeyRingFiles(std::vector<std::string> files, KeyRing ring)
    : files_(std::move(files)), ring_(std::make_shared<const KeyRing>(std::move(ring))) {}

Result<std::shared_ptr<KeyRingFiles>> KeyRingFiles::load(std::vector<std::string> files) {
  auto ring = KeyRing::load_all(files);
  if (!ring) return ring.error();
  return std::shared_ptr<KeyRingFiles>(new KeyRingFiles(std::move(files), std::move(*ring)));
}

Result<size_t> KeyRingFiles::reload() {
  auto ring = KeyRing::load_all(files_);
  if (!ring) return ring.error();
  const size_t n = ring->size();
  auto fresh = std::make_shared<const KeyRing>(std::move(*ring));
  std::lock_guard<std::mutex> lock(mu_);
  ring_ = std::move(fresh);
  return n;
}

std::shared_ptr<const KeyRing> KeyRingFiles::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ring_;
}

std::string fresh_key() {
  std::string key(kMinRingKeyBytes, '\0');
  // RAND_bytes fails only when the system has no entropy to seed from.
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    std::abort();
  }
  return key;
}

Result<std::string> add_to_ring(const std::string& ring, const std::string& identity) {
  if (!valid_identity(identity)) {
    return plain_error("keygen", fmt::format("'{}' is not a host name, an address or user@host "
                                             "(letters, digits, . - _ @ :, at most {})",
                                             identity.substr(0, 40), kMaxIdentityLength));
  }
  std::string text;
  struct stat st {};
  if (::stat(ring.c_str(), &st) == 0) {
    auto old = KeyRing::load(ring);
    if (!old) return old.error();
    if (old->find(identity)) {
      return plain_error("keygen", fmt::format("{} already holds identity '{}': delete its line "
                                               "first to give it a new key",
                                               ring, identity));
    }
    std::ifstream in(ring, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!text.empty() && text.back() != '\n') text += '\n';
  } else if (errno != ENOENT) {
    return errno_error("stat", ring);
  }
  std::string key = fresh_key();
  const std::string line = ring_line(identity, key);
  if (auto s = write_secret_atomically(ring, text + line); !s) return s.error();
  return line;
}

std::string ring_line(const std::string& identity, const std::string& key) {
  std::string hex;
  for (const char c : key) hex += fmt::format("{:02x}", static_cast<unsigned char>(c));
  return identity + " " + hex + "\n";
}

}  // namespace rdmacheck::proto
