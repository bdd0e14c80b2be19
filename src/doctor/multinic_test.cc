// The "multi-nic" check over a real capture: tests/fixtures/rxe-lab-2nic-dup
// (an `rdmacheck lab --nics 2` guest whose eth1 also carries an address in
// eth0's subnet; see tests/fixtures/README.md).
#include "doctor/multinic.h"

#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

const CheckResult* subject(const std::vector<CheckResult>& rs, const std::string& s) {
  for (const auto& r : rs) {
    if (r.subject == s) return &r;
  }
  return nullptr;
}

TEST(MultiNic, OneNicHasNothingToChooseBetween) {
  EXPECT_TRUE(check_multi_nic(Fixture("rxe-lab-doctor-healthy").m()).empty());
}

// h1 of the lab with eth1 given 198.18.0.11/24 too, kernel defaults
// (arp_ignore 0, arp_announce 0) and no policy rule.
TEST(MultiNic, ADuplicateSubnetWithoutArpSysctlsOrRulesIsNamedWithItsFix) {
  const auto rs = check_multi_nic(Fixture("rxe-lab-2nic-dup").m());
  const CheckResult* eth0 = subject(rs, "eth0");
  const CheckResult* eth1 = subject(rs, "eth1");
  ASSERT_NE(eth0, nullptr);
  ASSERT_NE(eth1, nullptr);
  EXPECT_EQ(fact(*eth0, "device"), "rxe0/1");
  EXPECT_EQ(fact(*eth1, "device"), "rxe1/1");
  // Which NIC routes to which subnet: eth1 reaches both.
  EXPECT_NE(fact(*eth0, "routes").find("198.18.0.0/24"), std::string::npos)
      << fact(*eth0, "routes");
  EXPECT_NE(fact(*eth1, "routes").find("198.18.1.0/24"), std::string::npos)
      << fact(*eth1, "routes");
  EXPECT_NE(fact(*eth1, "routes").find("198.18.0.0/24"), std::string::npos)
      << fact(*eth1, "routes");
  // The RoCE v2 GID of each address on each device.
  EXPECT_NE(fact(*eth1, "roce_v2_gids").find("198.18.0.11/24"), std::string::npos);
  EXPECT_EQ(fact(*eth1, "roce_v2_gids").find("null"), std::string::npos)
      << fact(*eth1, "roce_v2_gids");
  const Finding* f = find(rs, FindingId::kDuplicateSubnet);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarn);
  EXPECT_NE(f->summary.find("198.18.0.0/24 is configured on eth0 and eth1"), std::string::npos)
      << f->summary;
  EXPECT_NE(f->fix.find("sysctl -w net.ipv4.conf.eth1.arp_ignore=1"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("net.ipv4.conf.eth1.arp_announce=2"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("ip rule add from 198.18.0.11 table"), std::string::npos) << f->fix;
  bool saw_sysctl = false;
  for (const auto& e : f->evidence) saw_sysctl |= e.find("arp_ignore 0") != std::string::npos;
  EXPECT_TRUE(saw_sysctl);
}

// The same host once configured as the fix says: the sysctls under the
// root's /proc/sys and a rule plus a table per address (routing.json as
// `ip -j rule show` / `ip -j route show table all` print them).
TEST(MultiNic, ADuplicateSubnetWithSysctlsAndRulesIsOnlyInfo) {
  const ScratchCopy s("rxe-lab-2nic-dup", "multinic-fixed");
  s.write("/proc/sys/net/ipv4/conf/all/arp_ignore", "1\n");
  s.write("/proc/sys/net/ipv4/conf/all/arp_announce", "2\n");
  const nlohmann::json routing = nlohmann::json::array(
      {{{"command", kIpRules},
        {"started", true},
        {"exit_status", 0},
        {"out", R"([{"priority":0,"src":"all","table":"local"},)"
                R"({"priority":32764,"src":"198.18.0.1","table":"101"},)"
                R"({"priority":32765,"src":"198.18.0.11","table":"102"},)"
                R"({"priority":32766,"src":"all","table":"main"}])"}},
       {{"command", kIpRoutes},
        {"started", true},
        {"exit_status", 0},
        {"out", R"([{"dst":"198.18.0.0/24","dev":"eth0","table":"101","prefsrc":"198.18.0.1"},)"
                R"({"dst":"198.18.0.0/24","dev":"eth1","table":"102","prefsrc":"198.18.0.11"},)"
                R"({"dst":"198.18.0.0/24","dev":"eth0","prefsrc":"198.18.0.1"},)"
                R"({"dst":"198.18.0.0/24","dev":"eth1","prefsrc":"198.18.0.11"}])"}}});
  s.write("/capture/routing.json", routing.dump());
  const auto rs = check_multi_nic(Fixture(s.name()).m());
  const Finding* f = find(rs, FindingId::kDuplicateSubnet);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo) << f->summary;
  bool saw_rule = false;
  for (const auto& e : f->evidence) {
    saw_rule |= e.find("from 198.18.0.11 lookup 102") != std::string::npos &&
                e.find("routes via eth1") != std::string::npos;
  }
  EXPECT_TRUE(saw_rule);
  // A rule whose table routes by the other NIC is no fix.
  auto wrong = routing;
  wrong[1]["out"] = R"([{"dst":"198.18.0.0/24","dev":"eth0","table":"102"}])";
  s.write("/capture/routing.json", wrong.dump());
  const auto rewired = check_multi_nic(Fixture(s.name()).m());  // w points into it
  const Finding* w = find(rewired, FindingId::kDuplicateSubnet);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->severity, Severity::kWarn);
  EXPECT_NE(w->fix.find("ip route add 198.18.0.0/24 dev eth1 src 198.18.0.11 table 102"),
            std::string::npos)
      << w->fix;
}

TEST(MultiNic, TheKernelAppliesTheLargerOfAllAndTheDevice) {
  const ScratchCopy s("rxe-lab-2nic-dup", "multinic-sysctl");
  s.write("/proc/sys/net/ipv4/conf/all/arp_ignore", "0\n");
  s.write("/proc/sys/net/ipv4/conf/eth1/arp_ignore", "2\n");
  const FsRoot fs(s.name());
  EXPECT_EQ(effective_arp_sysctl(fs, "eth1", "arp_ignore"), 2);
  EXPECT_EQ(effective_arp_sysctl(fs, "eth1", "no_such_sysctl"), std::nullopt);
}

}  // namespace
}  // namespace rdmacheck::doctor
