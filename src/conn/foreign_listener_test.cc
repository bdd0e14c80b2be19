// A -p that reaches another service: the finding names the port, never the
// version of rdmacheck (the same fix for banner, silence and a close at once).
#include "testing/foreign_listener.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include "conn/ping.h"

namespace rdmacheck::conn {
namespace {

using test_util::ForeignListener;

PingReport ping_at(const ForeignListener& l) {
  PingOptions o;
  o.target.host = "127.0.0.1";
  o.target.tcp_port = l.port();
  o.timeout = std::chrono::milliseconds(1500);  // the silent one waits this long
  return run_ping(o);
}

void expect_not_rdmacheck(const PingReport& r, const std::string& id, uint16_t port) {
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings[0];
  EXPECT_EQ(id_name(f), id);
  EXPECT_NE(f.summary.find(fmt::format("something on 127.0.0.1:{} accepted the connection", port)),
            std::string::npos)
      << f.summary;
  EXPECT_NE(f.summary.find("`rdmacheck serve`"), std::string::npos) << f.summary;
  EXPECT_NE(f.fix.find("check -p / the port"), std::string::npos) << f.fix;
}

TEST(ForeignListener, ABannerIsAnotherServiceNotAnotherVersion) {
  ForeignListener l(ForeignListener::Manner::kBanner);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "not-rdmacheck-serve", l.port());
  EXPECT_EQ(r.findings[0].fix.find("same rdmacheck version"), std::string::npos);
}

TEST(ForeignListener, ACloseAtOnceIsAnotherService) {
  ForeignListener l(ForeignListener::Manner::kCloseAtOnce);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "not-rdmacheck-serve", l.port());
  EXPECT_EQ(r.findings[0].fix.find("same rdmacheck version"), std::string::npos);
}

TEST(ForeignListener, SilenceIsAnotherServiceOrAnOldRdmacheckAndSaysWhich) {
  ForeignListener l(ForeignListener::Manner::kSilent);
  const auto r = ping_at(l);
  expect_not_rdmacheck(r, "no-greeting", l.port());
  EXPECT_NE(r.findings[0].fix.find("older than protocol version 2"), std::string::npos);
  // Silence is also what a path that drops everything for seconds looks
  // like (the lab's switch-flap during the greeting): named, with how to tell.
  EXPECT_NE(r.findings[0].summary.find("or the path lost everything after the TCP handshake"),
            std::string::npos)
      << r.findings[0].summary;
  EXPECT_NE(r.findings[0].fix.find("the path dropped its greeting"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::conn
