// A server's certificate mode (serve --tls-cert, --tls-key, --tls-ca,
// --tls-crl): loaded at start, loaded again on request (SIGHUP: a new CRL
// revokes a client from its next handshake on; a renewed certificate is
// presented from then on). Each handshake takes the context of its moment;
// a reload that fails keeps the one it had.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/result.h"
#include "net/cert_expiry.h"
#include "net/tls.h"

namespace rdmacheck::serve {

// Said in the log at start and at each re-read:
// "certificate h1.pem (CN h1) expires 2026-12-08 05:00 UTC, in 1 day: renew it
// (SIGHUP re-reads it)", or that it has expired; nullopt while it has more
// than kRenewDays (net/cert_expiry.h) left.
std::optional<std::string> expiry_note(const TlsCertContext& c,
                                       std::chrono::system_clock::time_point now);

class CertStore {
 public:
  static Result<std::shared_ptr<CertStore>> load(const TlsCertFiles& files);
  [[nodiscard]] TlsCerts current() const;
  // Loads the files again; the old context stays when they fail.
  Result<Unit> reload();

 private:
  explicit CertStore(TlsCerts c) : current_(std::move(c)) {}
  mutable std::mutex mu_;
  TlsCerts current_;
};

}  // namespace rdmacheck::serve
