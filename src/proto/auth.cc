#include "proto/auth.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "net/tcp.h"
#include "proto/messages.h"

namespace rdmacheck::proto {
namespace {

using nlohmann::json;

constexpr uint32_t kMaxAuthFrame = 4096;
constexpr std::string_view kClientLabel = "rdmacheck-client-v2";
constexpr std::string_view kServerLabel = "rdmacheck-server-v2";

AuthError auth_error(AuthFailure kind, const std::string& text) {
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

int version_of(const json& j) {
  auto it = j.find("version");
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool equal(const Proof& a, const Proof& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The client's view of a server's error frame: an auth code, or a plain refusal (busy).
AuthError from_refusal(const json& frame) {
  AuthError e = auth_error(AuthFailure::kNone, error_text(frame));
  e.error.call = "server";
  auto it = frame.find("code");
  if (it != frame.end() && it->is_string()) {
    if (auto code = parse_enum<AuthFailure>(it->get<std::string>());
        code && *code != AuthFailure::kNone) {
      e.kind = *code;
      return e;
    }
  }
  e.refused = true;
  return e;
}

// No greeting: every rdmacheck since protocol version 2 greets first, in its
// framing, so bytes outside the framing or a close at once are another
// service; silence is another service or an rdmacheck older than version 2.
AuthError no_greeting(const FrameError& f) {
  switch (f.fault) {
    case FrameFault::kNotAFrame:
    case FrameFault::kClosed:
      return AuthError{AuthFailure::kForeign, f.error, false};
    case FrameFault::kTimedOut: {
      AuthError e{AuthFailure::kSilent, f.error, false};
      e.error.context += " (the listener sent no greeting)";
      return e;
    }
    case FrameFault::kIo:
      break;
  }
  return AuthError{AuthFailure::kProtocol, f.error, false};
}

AuthError tls_auth_error(AuthFailure kind, const TlsError& e) {
  return AuthError{kind, tls_error_text(e), false};
}

// The server's half with a key ring (TLS, the identity looked up in RING)
// or with certificates (CERTS: mutual TLS).
Result<Admitted, AuthError> accept_tls(Channel& c, const ServerKeys& keys, Deadline d) {
  const auto ring = keys.ring;
  auto tls = keys.certs
                 ? TlsChannel::accept(c.fd(), keys.certs, d)
                 : TlsChannel::accept(
                       c.fd(), [ring](const std::string& identity) { return ring->find(identity); },
                       d, keys.names);
  if (!tls) {
    switch (tls.error().fault) {
      case TlsFault::kUnknownIdentity:
      case TlsFault::kKeyMismatch:
      case TlsFault::kUnverified:
      case TlsFault::kWrongName:
        return tls_auth_error(AuthFailure::kFailed, tls.error());
      case TlsFault::kNotTls: {
        AuthError e = tls_auth_error(AuthFailure::kRequired, tls.error());
        e.error.context +=
            " (the client did not start TLS: an rdmacheck without a key ring line, or not "
            "rdmacheck)";
        return e;
      }
      default:
        return tls_auth_error(AuthFailure::kProtocol, tls.error());
    }
  }
  // With certificates TLS 1.3 lets the client finish before the server has
  // checked its certificate: an auth-ok tells it that the server did, or a
  // refusal that its identity is not one --allow-identity admits.
  if (keys.certs) {
    const auto& ids = keys.identities;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), tls->identity()) == ids.end()) {
      const std::string text =
          fmt::format("this server's --allow-identity list does not include '{}'", tls->identity());
      (void)tls->send_frame(refusal_message(AuthFailure::kNotAllowed, text), d);
      return auth_error(AuthFailure::kNotAllowed, text);
    }
    auto ok =
        tls->send_frame({{"type", type_name(MessageType::kAuthOk)}, {"version", kVersion}}, d);
    if (!ok) return tls_auth_error(AuthFailure::kProtocol, ok.error());
  }
  Admitted who;
  who.identity = tls->identity();
  c.secure(std::move(*tls));
  who.log_name = fmt::format("{} {}, {}", keys.certs ? "certificate" : "identity", who.identity,
                             c.protection());
  return who;
}

// The client's half: TLS with its ring line, or its certificate.
Result<Unit, AuthError> connect_tls(Channel& c, const Psk& key, const std::string& server_name,
                                    Deadline d) {
  auto tls = key.certs ? TlsChannel::connect(c.fd(), key.certs, server_name, d)
                       : TlsChannel::connect(c.fd(), TlsKey{key.identity, key.key}, server_name, d);
  if (tls && key.certs) {  // the server's word that it accepted this client's certificate
    auto ok = tls->recv_frame(d, kMaxAuthFrame);
    if (!ok) {
      tls = ok.error();
    } else if (type_of(*ok) == MessageType::kError) {  // --allow-identity leaves it out
      return from_refusal(*ok);
    } else if (type_of(*ok) != MessageType::kAuthOk) {
      return auth_error(AuthFailure::kProtocol, "expected the server's auth-ok after TLS");
    }
  }
  if (!tls) {
    switch (tls.error().fault) {
      case TlsFault::kRefused:
        return tls_auth_error(AuthFailure::kFailed, tls.error());
      case TlsFault::kUnverified:
      case TlsFault::kWrongName:
        return tls_auth_error(AuthFailure::kServerUnproven, tls.error());
      default:
        return tls_auth_error(AuthFailure::kProtocol, tls.error());
    }
  }
  c.secure(std::move(*tls));
  return Unit{};
}

}  // namespace

Proof auth_proof(const std::string& key, Side who, const Nonce& ns, const Nonce& nc) {
  const std::string_view label = who == Side::kClient ? kClientLabel : kServerLabel;
  std::string msg(label);
  msg.append(reinterpret_cast<const char*>(ns.data()), ns.size());
  msg.append(reinterpret_cast<const char*>(nc.data()), nc.size());
  Proof out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out.data(), &len);
  return out;
}

Nonce fresh_nonce() {
  Nonce n{};
  // RAND_bytes fails only when the system has no entropy to seed from: no
  // nonce is better than a predictable one.
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) std::abort();
  return n;
}

json refusal_message(AuthFailure code, const std::string& text) {
  json j = error_message(text);
  j["code"] = std::string(name_of(code));
  return j;
}

Result<Admitted, AuthError> greet_client(Channel& sock, const ServerKeys& all, Deadline d) {
  const std::vector<Psk>& keys = all.raw;
  const Nonce ns = fresh_nonce();
  json greeting = {{"type", type_name(MessageType::kGreeting)},
                   {"version", kVersion},
                   {"auth", all.certs      ? "tls-cert"
                            : all.ring     ? "tls-psk"
                            : keys.empty() ? "none"
                                           : "psk"}};
  if (!keys.empty()) greeting["nonce"] = hex(ns);
  if (auto s = send_frame(sock, greeting, d); !s) {
    return AuthError{AuthFailure::kProtocol, s.error(), false};
  }
  if (all.ring || all.certs) return accept_tls(sock, all, d);
  if (keys.empty()) return Admitted{};
  auto refuse = [&](AuthFailure code, const std::string& text) -> AuthError {
    (void)send_frame(sock, refusal_message(code, text), d);
    return auth_error(code, text);
  };
  auto frame = recv_frame(sock, d, kMaxAuthFrame);
  if (!frame) return AuthError{AuthFailure::kProtocol, frame.error(), false};
  const auto type = type_of(*frame);
  if (type ==
      MessageType::kError) {  // the client gave up (it has no key, or will not talk without one)
    return auth_error(AuthFailure::kRequired, "the client says: " + error_text(*frame));
  }
  if (version_of(*frame) != kVersion) {
    return refuse(AuthFailure::kProtocol,
                  fmt::format("the client speaks protocol version {}, this server speaks {}: run "
                              "the same rdmacheck version on both hosts",
                              version_of(*frame), kVersion));
  }
  if (type != MessageType::kAuth) {
    return refuse(AuthFailure::kRequired,
                  fmt::format("this server requires a pre-shared key; the client sent '{}' "
                              "without proving one",
                              message_type(*frame)));
  }
  const auto nc = unhex<kNonceBytes>(*frame, "nonce");
  const auto proof = unhex<kProofBytes>(*frame, "proof");
  if (!nc || !proof) {
    return refuse(AuthFailure::kProtocol,
                  "malformed auth message: nonce and proof must be 64 hex digits");
  }
  if (*nc == ns) return refuse(AuthFailure::kProtocol, "the client's nonce repeats the server's");
  int match = -1;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (equal(auth_proof(keys[i].key, Side::kClient, ns, *nc), *proof)) match = static_cast<int>(i);
  }
  if (match < 0) {
    return refuse(AuthFailure::kFailed,
                  fmt::format("the client's key is not {} this server accepts",
                              keys.size() == 1 ? "the one" : "one of the keys"));
  }
  const Proof mine = auth_proof(keys[static_cast<size_t>(match)].key, Side::kServer, ns, *nc);
  if (auto s = send_frame(sock,
                          json{{"type", type_name(MessageType::kAuthOk)},
                               {"version", kVersion},
                               {"proof", hex(mine)}},
                          d);
      !s) {
    return AuthError{AuthFailure::kProtocol, s.error(), false};
  }
  Admitted who;
  who.raw_key = match;
  who.log_name = "key " + keys[static_cast<size_t>(match)].file;
  return who;
}

Result<Unit, AuthError> meet_server(Channel& sock, const std::optional<Psk>& key,
                                    const std::string& server_name, Deadline d) {
  auto greeting = read_frame(sock, d, kMaxAuthFrame);
  if (!greeting) return no_greeting(greeting.error());
  const auto type = type_of(*greeting);
  if (type == MessageType::kError) return from_refusal(*greeting);
  if (type != MessageType::kGreeting) {
    return auth_error(
        AuthFailure::kProtocol,
        fmt::format("expected the server's greeting, got '{}'", message_type(*greeting)));
  }
  if (version_of(*greeting) != kVersion) {
    return auth_error(AuthFailure::kProtocol,
                      fmt::format("the server speaks protocol version {}, this client speaks {}: "
                                  "run the same rdmacheck version on both hosts",
                                  version_of(*greeting), kVersion));
  }
  const std::string mode = greeting->value("auth", "");
  if (mode == "none") {
    if (!key) return Unit{};
    const std::string text = fmt::format(
        "the server runs without a key and this client has one ({}): it cannot prove who it is",
        key->file);
    (void)send_frame(sock, error_message("client refused: " + text), d);
    return auth_error(AuthFailure::kServerUnkeyed, text);
  }
  if (mode == "tls-cert") {
    if (!key || !key->certs) {
      const std::string text =
          "the server takes certificates (mutual TLS) and this client has none: give it "
          "--tls-cert, --tls-key and --tls-ca";
      (void)send_frame(sock, error_message("client refused: " + text), d);
      return auth_error(key ? AuthFailure::kFailed : AuthFailure::kRequired, text);
    }
    return connect_tls(sock, *key, server_name, d);
  }
  if (key && key->certs) {
    const std::string text = fmt::format(
        "this client has a certificate ({}) and the server takes {}: give the server --tls-cert "
        "(or this client the server's kind of key)",
        key->file, mode == "none" ? "no key" : "pre-shared keys");
    (void)send_frame(sock, error_message("client refused: " + text), d);
    return auth_error(mode == "none" ? AuthFailure::kServerUnkeyed : AuthFailure::kFailed, text);
  }
  if (mode == "tls-psk") {
    if (!key) {
      (void)send_frame(sock, error_message("client has no key (give it --psk-file)"), d);
      return auth_error(AuthFailure::kRequired,
                        "the server requires a key (TLS with a key ring) and this client has none");
    }
    if (key->identity.empty()) {
      const std::string text = fmt::format(
          "the server holds a key ring (TLS) and {} is a raw key: the client's key file is its "
          "line of the server's ring (`rdmacheck keygen NAME --ring RING` prints it)",
          key->file);
      (void)send_frame(sock, error_message("client refused: " + text), d);
      return auth_error(AuthFailure::kFailed, text);
    }
    return connect_tls(sock, *key, server_name, d);
  }
  const auto ns = unhex<kNonceBytes>(*greeting, "nonce");
  if (mode != "psk" || !ns) {
    return auth_error(AuthFailure::kProtocol, "malformed greeting: unknown auth or bad nonce");
  }
  if (key && !key->identity.empty()) {
    const std::string text = fmt::format(
        "the server holds a raw key file (no TLS) and {} is a key ring line: give the server "
        "its key ring (serve --psk-file RING), or this client the server's raw key",
        key->file);
    (void)send_frame(sock, error_message("client refused: " + text), d);
    return auth_error(AuthFailure::kFailed, text);
  }
  if (!key) {
    const std::string text = "the server requires a pre-shared key and this client has none";
    (void)send_frame(sock, error_message("client has no key (give it --psk-file)"), d);
    return auth_error(AuthFailure::kRequired, text);
  }
  Nonce nc = fresh_nonce();
  while (nc == *ns) nc = fresh_nonce();
  const Proof proof = auth_proof(key->key, Side::kClient, *ns, nc);
  if (auto s = send_frame(sock,
                          json{{"type", type_name(MessageType::kAuth)},
                               {"version", kVersion},
                               {"nonce", hex(nc)},
                               {"proof", hex(proof)}},
                          d);
      !s) {
    return AuthError{AuthFailure::kProtocol, s.error(), false};
  }
  auto reply = recv_frame(sock, d, kMaxAuthFrame);
  if (!reply) return AuthError{AuthFailure::kProtocol, reply.error(), false};
  if (type_of(*reply) == MessageType::kError) return from_refusal(*reply);
  const auto theirs = unhex<kProofBytes>(*reply, "proof");
  if (type_of(*reply) != MessageType::kAuthOk || !theirs) {
    return auth_error(AuthFailure::kProtocol, "malformed answer to the client's proof");
  }
  if (!equal(auth_proof(key->key, Side::kServer, *ns, nc), *theirs)) {
    return auth_error(AuthFailure::kServerUnproven,
                      fmt::format("the server's proof does not match the key in {}: it does not "
                                  "hold this key",
                                  key->file));
  }
  return Unit{};
}

}  // namespace rdmacheck::proto
