// How near a certificate is to its end, in words both sides use: serve logs
// its own at start and SIGHUP (serve/cert_store.h), a client reports its own
// and the server's as the certificate-expiring finding (conn/diagnose_auth).
// Pure; tested in cert_expiry_test.cc.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace rdmacheck {

// Within this many days of its end a certificate is said to be expiring.
inline constexpr int kRenewDays = 30;

struct CertExpiry {
  bool expired = false;
  std::string text;  // "expires 2026-12-08 05:00 UTC, in 1 day", "expired 2026-12-08 05:00 UTC"
};

// NOT_AFTER seen at NOW; nullopt while more than kRenewDays remain.
std::optional<CertExpiry> cert_expiry(std::chrono::system_clock::time_point not_after,
                                      std::chrono::system_clock::time_point now);

}  // namespace rdmacheck
