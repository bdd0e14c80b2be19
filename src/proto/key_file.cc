// Key files (proto/auth.h): a client's ring line or raw key, and telling a
// server's key ring from a raw key file.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "proto/auth.h"
#include "proto/auth_wire.h"
#include "proto/key_ring.h"

namespace rdmacheck::proto {
namespace {

using auth_wire::auth_error;

// A key ring line rather than raw key bytes: printable text whose first
// line that is not a comment has a space or tab in it.
bool looks_like_ring_line(const std::string& text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x7f || (u < 0x20 && c != '\n' && c != '\r' && c != '\t')) return false;
  }
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    return line.find_first_of(" \t", start) != std::string::npos;
  }
  return false;
}

}  // namespace

Result<Psk, AuthError> load_psk(const std::string& file) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    return AuthError{AuthFailure::kKeyFileUnreadable, errno_error("open", file), false};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return AuthError{AuthFailure::kKeyFileUnreadable, errno_error("fstat", file), false};
  }
  if (!S_ISREG(st.st_mode)) {
    return auth_error(AuthFailure::kKeyFileUnreadable, fmt::format("{} is not a file", file));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0 && !is_systemd_credential(file)) {
    return auth_error(AuthFailure::kKeyFileUnsafe,
                      fmt::format("key file {} is accessible by group or others (mode {:04o}): "
                                  "chmod 600 {}",
                                  file, st.st_mode & 07777, file));
  }
  if (st.st_size > static_cast<off_t>(kMaxKeyBytes)) {
    return auth_error(AuthFailure::kKeyFileUnreadable,
                      fmt::format("key file {} holds {} bytes, more than a key's {}", file,
                                  st.st_size, kMaxKeyBytes));
  }
  Psk k{file, std::string(static_cast<size_t>(st.st_size), '\0')};
  size_t got = 0;
  while (got < k.key.size()) {
    const ssize_t n = ::read(fd.get(), k.key.data() + got, k.key.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return AuthError{AuthFailure::kKeyFileUnreadable, errno_error("read", file), false};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  k.key.resize(got);
  if (!looks_like_ring_line(k.key)) {
    if (got < kMinKeyBytes) {
      return auth_error(AuthFailure::kKeyFileUnreadable,
                        fmt::format("key file {} holds {} bytes, a raw key needs {}..{} "
                                    "(rdmacheck keygen NAME makes a key ring line)",
                                    file, got, kMinKeyBytes, kMaxKeyBytes));
    }
    return k;
  }
  auto ring = KeyRing::parse(k.key, file);
  if (!ring) return AuthError{AuthFailure::kKeyFileUnreadable, ring.error(), false};
  auto line = ring->only();
  if (!line) {
    return auth_error(AuthFailure::kKeyFileUnreadable,
                      fmt::format("{} holds {} keys; a client's key file is one line of the "
                                  "server's key ring (its own)",
                                  file, ring->size()));
  }
  return Psk{file, line->second, line->first};
}

Result<bool> is_key_ring(const std::string& file) {
  Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) return errno_error("open", file);
  std::string head(4096, '\0');
  ssize_t n = 0;
  do {
    n = ::read(fd.get(), head.data(), head.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno_error("read", file);
  head.resize(static_cast<size_t>(n));
  // A ring's first 4096 bytes may end inside a line: judge what is whole.
  if (head.size() == 4096)
    head.resize(head.rfind('\n') == std::string::npos ? 0 : head.rfind('\n'));
  return looks_like_ring_line(head);
}

}  // namespace rdmacheck::proto
