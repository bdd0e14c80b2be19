#include "serve/cert_store.h"

#include <fmt/chrono.h>
#include <fmt/core.h>

namespace rdmacheck::serve {

std::optional<std::string> expiry_note(const TlsCertContext& c,
                                       std::chrono::system_clock::time_point now) {
  const auto e = cert_expiry(c.not_after(), now);
  if (!e) return std::nullopt;
  const std::string which = fmt::format("certificate {} (CN {})", c.files().cert, c.subject());
  if (e->expired) {
    return fmt::format(
        "rdmacheck serve: {} {}: clients refuse it (certificate has expired); put a renewed one "
        "in place and send SIGHUP",
        which, e->text);
  }
  return fmt::format("rdmacheck serve: {} {}: renew it before then (SIGHUP re-reads it)", which,
                     e->text);
}

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
