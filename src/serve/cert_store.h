// A server's certificate mode (serve --tls-cert, --tls-key, --tls-ca,
// --tls-crl): loaded at start, loaded again on request (SIGHUP: a new CRL
// revokes a client from its next handshake on; a renewed certificate is
// presented from then on). Each handshake takes the context of its moment;
// a reload that fails keeps the one it had.
#pragma once

#include <memory>
#include <mutex>

#include "base/result.h"
#include "net/tls.h"

namespace rdmacheck::serve {

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
