#include "net/cert_expiry.h"

#include <fmt/chrono.h>
#include <fmt/core.h>

namespace rdmacheck {

std::optional<CertExpiry> cert_expiry(std::chrono::system_clock::time_point not_after,
                                      std::chrono::system_clock::time_point now) {
  using std::chrono::hours;
  const auto left = not_after - now;
  if (left > hours(24 * kRenewDays)) return std::nullopt;
  const std::string when =
      fmt::format("{:%Y-%m-%d %H:%M} UTC", std::chrono::floor<std::chrono::minutes>(not_after));
  if (left <= hours(0)) return CertExpiry{true, "expired " + when};
  const auto days = std::chrono::duration_cast<hours>(left).count() / 24;
  return CertExpiry{false,
                    fmt::format("expires {}, in {}", when,
                                days == 0 ? std::string("less than a day")
                                          : fmt::format("{} day{}", days, days == 1 ? "" : "s"))};
}

}  // namespace rdmacheck
