#include "serve/cert_store.h"

namespace rdmacheck::serve {

Result<std::shared_ptr<CertStore>> CertStore::load(const TlsCertFiles& files) {
  auto c = TlsCertContext::load(files, true);
  if (!c) return c.error();
  return std::shared_ptr<CertStore>(new CertStore(std::move(*c)));
}

TlsCerts CertStore::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

Result<Unit> CertStore::reload() {
  auto c = TlsCertContext::load(current()->files(), true);
  if (!c) return c.error();
  std::lock_guard<std::mutex> lock(mu_);
  current_ = std::move(*c);
  return Unit{};
}

}  // namespace rdmacheck::serve
