// The client's half of authentication (proto/auth.h): it reads the
// server's greeting and meets it with its key ring line, its certificate or
// its raw key, or refuses a server that cannot prove who it is.
#include <fmt/core.h>

#include <optional>
#include <string>

#include "net/tcp.h"
#include "proto/auth.h"
#include "proto/auth_wire.h"
#include "proto/messages.h"

namespace rdmacheck::proto {
namespace {

using namespace auth_wire;

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

// The client refuses the server: it says why in an error frame, and the
// finding is KIND.
AuthError refuse_server(Channel& sock, AuthFailure kind, const std::string& text, Deadline d) {
  (void)send_frame(sock, error_message("client refused: " + text), d);
  return auth_error(kind, text);
}

// The client has no key and the server wants one.
AuthError no_key(Channel& sock, const std::string& text, Deadline d) {
  (void)send_frame(sock, error_message("client has no key (give it --psk-file)"), d);
  return auth_error(AuthFailure::kRequired, text);
}

// A raw key's challenge and response (the greeting gave NS): this client's
// proof, then the server's checked.
Result<Unit, AuthError> prove_raw_key(Channel& sock, const Psk& key, const Nonce& ns, Deadline d) {
  Nonce nc = fresh_nonce();
  while (nc == ns) nc = fresh_nonce();
  const Proof proof = auth_proof(key.key, Side::kClient, ns, nc);
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
  if (!equal(auth_proof(key.key, Side::kServer, ns, nc), *theirs)) {
    return auth_error(AuthFailure::kServerUnproven,
                      fmt::format("the server's proof does not match the key in {}: it does not "
                                  "hold this key",
                                  key.file));
  }
  return Unit{};
}

// The greeting of a server that speaks this version, or why not.
Result<json, AuthError> server_greeting(Channel& sock, Deadline d) {
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
  return std::move(*greeting);
}

}  // namespace

Result<Unit, AuthError> meet_server(Channel& sock, const std::optional<Psk>& key,
                                    const std::string& server_name, Deadline d) {
  auto greeting = server_greeting(sock, d);
  if (!greeting) return greeting.error();
  const auto mode = parse_enum<AuthMode>(greeting->value("auth", ""));
  if (mode == AuthMode::kNone) {
    if (!key) return Unit{};
    return refuse_server(sock, AuthFailure::kServerUnkeyed,
                         fmt::format("the server runs without a key and this client has one "
                                     "({}): it cannot prove who it is",
                                     key->file),
                         d);
  }
  if (mode == AuthMode::kTlsCert) {
    if (key && key->certs) return connect_tls(sock, *key, server_name, d);
    return refuse_server(sock, key ? AuthFailure::kFailed : AuthFailure::kRequired,
                         "the server takes certificates (mutual TLS) and this client has none: "
                         "give it --tls-cert, --tls-key and --tls-ca",
                         d);
  }
  if (key && key->certs) {
    return refuse_server(sock, AuthFailure::kFailed,
                         fmt::format("this client has a certificate ({}) and the server takes "
                                     "pre-shared keys: give the server --tls-cert (or this client "
                                     "the server's kind of key)",
                                     key->file),
                         d);
  }
  if (mode == AuthMode::kTlsPsk) {
    if (!key) {
      return no_key(sock,
                    "the server requires a key (TLS with a key ring) and this client has none", d);
    }
    if (!key->identity.empty()) return connect_tls(sock, *key, server_name, d);
    return refuse_server(sock, AuthFailure::kFailed,
                         fmt::format("the server holds a key ring (TLS) and {} is a raw key: the "
                                     "client's key file is its line of the server's ring "
                                     "(`rdmacheck keygen NAME --ring RING` prints it)",
                                     key->file),
                         d);
  }
  const auto ns = unhex<kNonceBytes>(*greeting, "nonce");
  if (mode != AuthMode::kPsk || !ns) {
    return auth_error(AuthFailure::kProtocol, "malformed greeting: unknown auth or bad nonce");
  }
  if (key && !key->identity.empty()) {
    return refuse_server(sock, AuthFailure::kFailed,
                         fmt::format("the server holds a raw key file (no TLS) and {} is a key "
                                     "ring line: give the server its key ring (serve --psk-file "
                                     "RING), or this client the server's raw key",
                                     key->file),
                         d);
  }
  if (!key) return no_key(sock, "the server requires a pre-shared key and this client has none", d);
  return prove_raw_key(sock, *key, *ns, d);
}

}  // namespace rdmacheck::proto
