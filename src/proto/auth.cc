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
#include "proto/auth_wire.h"
#include "proto/messages.h"

namespace rdmacheck::proto {
namespace {

using nlohmann::json;
using namespace auth_wire;

constexpr std::string_view kClientLabel = "rdmacheck-client-v2";
constexpr std::string_view kServerLabel = "rdmacheck-server-v2";

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
                   {"auth", std::string(name_of(all.certs      ? AuthMode::kTlsCert
                                                : all.ring     ? AuthMode::kTlsPsk
                                                : keys.empty() ? AuthMode::kNone
                                                               : AuthMode::kPsk))}};
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

}  // namespace rdmacheck::proto
