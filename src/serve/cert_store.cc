#include "serve/cert_store.h"

#include <fmt/chrono.h>
#include <fmt/core.h>

namespace rdmacheck::serve {

std::optional<std::string> expiry_note(const TlsCertContext& c,
                                       std::chrono::system_clock::time_point now) {
  using std::chrono::hours;
  const auto left = c.not_after() - now;
  if (left > hours(24 * kRenewDays)) return std::nullopt;
  const std::string when =
      fmt::format("{:%Y-%m-%d %H:%M} UTC", std::chrono::floor<std::chrono::minutes>(c.not_after()));
  const std::string which = fmt::format("certificate {} (CN {})", c.files().cert, c.subject());
  if (left <= hours(0)) {
    return fmt::format(
        "rdmacheck serve: {} expired {}: clients refuse it (certificate has "
        "expired); put a renewed one in place and send SIGHUP",
        which, when);
  }
  const auto days = std::chrono::duration_cast<hours>(left).count() / 24;
  return fmt::format(
      "rdmacheck serve: {} expires {}, in {}: renew it before then (SIGHUP "
      "re-reads it)",
      which, when,
      days == 0 ? std::string("less than a day")
                : fmt::format("{} day{}", days, days == 1 ? "" : "s"));
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
