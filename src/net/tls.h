// TLS 1.3 on a connected TCP socket, authenticated by external pre-shared
// keys (RFC 8446 §2.2, OpenSSL's PSK session callbacks): every record after
// the handshake is encrypted and integrity-protected, the handshake does an
// ECDHE exchange as well (psk_dhe_ke: a key that leaks later does not open
// recorded sessions), and each client names its identity, so a server can
// hold one key per client and refuse a revoked one.
//
// OpenSSL never touches the socket: it reads and writes memory buffers, and
// this file moves the bytes with the same deadline-bound I/O as net/tcp.h
// (MSG_DONTWAIT, MSG_NOSIGNAL; the socket's own flags stay as they are).
// Frames inside TLS are those of net/tcp.h: a 4-byte length, then JSON.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "net/tcp.h"

namespace rdmacheck {

namespace detail {
struct TlsState;
}

// A client's key: the identity it names and the secret both sides hold
// (raw bytes). The TLS PSK is derived from the secret (HMAC-SHA256 with a
// fixed label), so a secret of any length gives the PSK TLS 1.3 expects.
struct TlsKey {
  std::string identity;
  std::string secret;
};

// Why a TLS connection failed, typed so that a caller can name the cause.
enum class TlsFault {
  kIo,               // a socket error
  kTimedOut,         // the deadline passed
  kClosed,           // the peer closed the connection
  kNotTls,           // the peer's first bytes are not TLS: another service, an older rdmacheck
  kUnknownIdentity,  // (server) no key for the identity the client named: unknown or revoked
  kKeyMismatch,      // (server) the client's key for its identity is not this server's
  kRefused,          // (client) the server ended the handshake: it does not know this identity
                     // or holds another key for it (only the server can tell which)
  kTampered,         // a record failed its integrity check: changed on the path
  kUnverified,       // (certificates) the peer's certificate does not verify: another CA,
                     // expired, revoked, or (client) it does not name the host dialled
  kWrongName,        // the name the client dialled (SNI) is not one the server answers to:
                     // a relay to another server, DNS, or a name the server was not given
  kProtocol,         // any other TLS failure; the message has OpenSSL's reason or the alert
};

struct TlsError {
  TlsFault fault = TlsFault::kIo;
  Error error;
};

// Certificate mode (mutual TLS): each side presents its certificate chain;
// each verifies the other's against CA. A client also checks that the
// server's certificate names the host it dialled (a DNS name or an IP
// address in its subjectAltName); a server checks the client's against CRL
// (when given: a revoked certificate is refused). Loaded once and shared by
// every connection; a reload (SIGHUP) loads a new one. Files are PEM.
struct TlsCertFiles {
  std::string cert;  // this side's certificate, then its chain
  std::string key;   // its private key
  std::string ca;    // the CA that signs the peer's
  std::string crl;   // (server, optional) revoked client certificates
};
class TlsCertContext {
 public:
  static Result<std::shared_ptr<const TlsCertContext>> load(const TlsCertFiles& files, bool server);
  ~TlsCertContext();
  TlsCertContext(const TlsCertContext&) = delete;
  TlsCertContext& operator=(const TlsCertContext&) = delete;
  [[nodiscard]] void* ctx() const { return ctx_; }  // SSL_CTX*
  [[nodiscard]] const TlsCertFiles& files() const { return files_; }
  [[nodiscard]] const std::string& subject() const { return subject_; }  // this side's CN
  // When this side's certificate stops being valid (its notAfter).
  [[nodiscard]] std::chrono::system_clock::time_point not_after() const { return not_after_; }

 private:
  TlsCertContext() = default;
  void* ctx_ = nullptr;
  TlsCertFiles files_;
  std::string subject_;
  std::chrono::system_clock::time_point not_after_;
};
using TlsCerts = std::shared_ptr<const TlsCertContext>;

class TlsChannel {
 public:
  // The server's key store: the secret for an identity, nullopt when it has none.
  using KeyLookup = std::function<std::optional<std::string>(const std::string& identity)>;

  // The client's handshake on the connected socket FD (which must outlive the
  // channel): offers KEY and sends SERVER_NAME (SNI: the name it dialled).
  static Result<TlsChannel, TlsError> connect(const Fd& fd, const TlsKey& key,
                                              const std::string& server_name, Deadline d);
  // Whether the server answers to the name a client dialled (its SNI; "" when it sent none).
  using NameCheck = std::function<bool(const std::string& server_name)>;

  // The server's handshake: KEYS answers for the identity the client names.
  // With NAMES, a client that dialled a name NAMES refuses gets TLS's
  // unrecognized_name alert and no session: a connection relayed from
  // another server of the fleet (the client dialled that one) fails.
  static Result<TlsChannel, TlsError> accept(const Fd& fd, KeyLookup keys, Deadline d,
                                             NameCheck names = nullptr);
  // The same with certificates; identity() is then the peer certificate's CN.
  static Result<TlsChannel, TlsError> connect(const Fd& fd, const TlsCerts& certs,
                                              const std::string& server_name, Deadline d);
  static Result<TlsChannel, TlsError> accept(const Fd& fd, const TlsCerts& certs, Deadline d);

  TlsChannel(TlsChannel&&) noexcept;
  TlsChannel& operator=(TlsChannel&&) noexcept;
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;
  ~TlsChannel();

  Result<Unit, TlsError> send_frame(const nlohmann::json& msg, Deadline d);
  Result<nlohmann::json, TlsError> recv_frame(Deadline d, uint32_t max = kMaxFrame);
  // Sends TLS's close_notify (best effort, bounded by D).
  void close(Deadline d);
  // Whether bytes of the peer's wait in memory (read from the socket, or
  // decrypted and not yet a whole frame): polling the socket would miss them.
  [[nodiscard]] bool buffered() const;

  // The identity the client named (both sides); with certificates, the
  // peer certificate's subject CN.
  [[nodiscard]] const std::string& identity() const;
  // The name the client dialled (SNI), as the server received it; "" without one.
  [[nodiscard]] const std::string& server_name() const;
  [[nodiscard]] std::string version() const;  // "TLSv1.3"
  [[nodiscard]] std::string cipher() const;   // "TLS_AES_128_GCM_SHA256"
  // Certificate mode: this side's context (its file, CN and end); nullptr with keys.
  [[nodiscard]] const TlsCerts& certs() const;
  // Certificate mode: when the peer's certificate ends (its notAfter); nullopt with keys.
  [[nodiscard]] std::optional<std::chrono::system_clock::time_point> peer_not_after() const;

 private:
  explicit TlsChannel(std::unique_ptr<detail::TlsState> s);
  std::unique_ptr<detail::TlsState> s_;
};

}  // namespace rdmacheck
