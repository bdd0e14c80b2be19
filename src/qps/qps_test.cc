#include "qps/qps.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sysfs/fs_root.h"

namespace rdmacheck::qps {
namespace {

const std::string kFixtures = RDMACHECK_FIXTURES;

// The QP list `doctor --capture` recorded under the fixture's capture/ (the
// same file doctor's replay reads; qps/ cannot reach doctor/ from its floor).
std::vector<QpInfo> captured_qps(const FsRoot& fs) {
  const auto text = fs.read("/capture/qps.json");
  EXPECT_TRUE(text.ok()) << fs.root();
  std::vector<QpInfo> out;
  if (!text) return out;
  for (const auto& q : nlohmann::json::parse(*text)) out.push_back(qp_from_json(q));
  return out;
}

TEST(Qps, FlagsErrorAndNotReadyQps) {
  const FsRoot fs(kFixtures + "/mlx5-gen3x8");
  const auto r = make_report(captured_qps(fs));
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.qps.size(), 4u);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].id, FindingId::kQpInError);
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  EXPECT_NE(r.findings[0].evidence[0].find("lqpn 4522"), std::string::npos);
  EXPECT_EQ(r.findings[1].id, FindingId::kQpNotReady);
  EXPECT_NE(r.findings[1].evidence[0].find("INIT"), std::string::npos);
  EXPECT_EQ(r.exit_status(), 1);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("app_server  <- ERROR"), std::string::npos) << text;
  EXPECT_NE(text.find("[ib_core]"), std::string::npos);
  const auto j = to_json(r);
  EXPECT_EQ(j["qps"].size(), 4u);
  EXPECT_EQ(j["qps"][2]["state"], "ERR");
  EXPECT_EQ(j["findings"][0]["id"], "qp-in-error");
}

TEST(Qps, HealthyListHasNoFindings) {
  const FsRoot fs(kFixtures + "/mlx5-healthy");
  const auto r = make_report(captured_qps(fs));
  EXPECT_EQ(r.qps.size(), 1u);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.exit_status(), 0);
}

TEST(Qps, AnUnreadableListExitsTwoAndSaysWhy) {
  const auto r = make_report(Error{"socket(AF_NETLINK)", EPROTONOSUPPORT, "netlink bus 20"});
  EXPECT_EQ(r.exit_status(), 2);
  EXPECT_NE(format_text(r).find("ib_core is not loaded"), std::string::npos);
  EXPECT_FALSE(to_json(r)["error"].is_null());
}

}  // namespace
}  // namespace rdmacheck::qps
