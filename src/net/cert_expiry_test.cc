#include "net/cert_expiry.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

// 2026-12-08 05:00 UTC, as sys_days + hours.
const auto kEnd = std::chrono::sys_days{std::chrono::year{2026} / 12 / 8} + hours(5);

TEST(CertExpiry, MoreThanThirtyDaysLeftSaysNothing) {
  EXPECT_FALSE(cert_expiry(kEnd, kEnd - hours(24 * kRenewDays + 1)));
  EXPECT_FALSE(cert_expiry(kEnd, kEnd - hours(24 * 365)));
}

TEST(CertExpiry, WithinThirtyDaysTheDateAndTheDaysLeft) {
  const auto e = cert_expiry(kEnd, kEnd - hours(24 * kRenewDays - 1));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->expired);
  EXPECT_EQ(e->text, "expires 2026-12-08 05:00 UTC, in 29 days");
  EXPECT_EQ(cert_expiry(kEnd, kEnd - hours(30))->text, "expires 2026-12-08 05:00 UTC, in 1 day");
  EXPECT_EQ(cert_expiry(kEnd, kEnd - minutes(5))->text,
            "expires 2026-12-08 05:00 UTC, in less than a day");
}

TEST(CertExpiry, PastItsEndItHasExpired) {
  const auto e = cert_expiry(kEnd, kEnd + hours(1));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->expired);
  EXPECT_EQ(e->text, "expired 2026-12-08 05:00 UTC");
  EXPECT_TRUE(cert_expiry(kEnd, kEnd)->expired);  // at its notAfter: said as ended
}

}  // namespace
}  // namespace rdmacheck
