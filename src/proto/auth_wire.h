// What the server's half (proto/auth.cc) and the client's half
// (proto/auth_client.cc) of authentication share: the frame bound, the
// error's shape and the hex of nonces and proofs. Only those two include it.
#pragma once

#include <fmt/core.h>
#include <openssl/crypto.h>

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "net/tls.h"
#include "proto/auth.h"

namespace rdmacheck::proto::auth_wire {

using nlohmann::json;

constexpr uint32_t kMaxAuthFrame = 4096;

inline AuthError auth_error(AuthFailure kind, const std::string& text) {
  return AuthError{kind, plain_error("auth", text), false};
}

template <size_t N>
std::string hex(const std::array<uint8_t, N>& bytes) {
  std::string s;
  s.reserve(2 * N);
  for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
  return s;
}

// Exactly 2*N lowercase or uppercase hex digits, or nullopt.
template <size_t N>
std::optional<std::array<uint8_t, N>> unhex(const json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() != 2 * N) return std::nullopt;
  std::array<uint8_t, N> out{};
  for (size_t i = 0; i < N; ++i) {
    int v = 0;
    for (char c : {s[2 * i], s[2 * i + 1]}) {
      int d = 0;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      v = v * 16 + d;
    }
    out[i] = static_cast<uint8_t>(v);
  }
  return out;
}

inline int version_of(const json& j) {
  auto it = j.find("version");
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

inline bool equal(const Proof& a, const Proof& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

inline AuthError tls_auth_error(AuthFailure kind, const TlsError& e) {
  return AuthError{kind, tls_error_text(e), false};
}

}  // namespace rdmacheck::proto::auth_wire
