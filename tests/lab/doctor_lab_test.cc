// doctor on the real stack: inside a lab guest, against the kernel's
// own rxe0, packet filter and RDMA netlink.
#include <gtest/gtest.h>

#include <set>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

std::set<std::string> id_set(const nlohmann::json& findings) {
  const auto v = finding_ids(findings);
  return {v.begin(), v.end()};
}

const nlohmann::json* check(const nlohmann::json& doc, const std::string& name,
                            const std::string& subject) {
  for (const auto& c : doc["checks"]) {
    if (c["check"] == name && c["subject"] == subject) return &c;
  }
  return nullptr;
}

// A healthy Soft-RoCE guest: nothing at warn or above, so exit 0, and the
// notes a software device honestly gets (nominal rate, no PCIe, no DCB, no
// cpufreq in a VM, MTU 1500 -> RoCE MTU 1024).
TEST(DoctorLab, HealthyGuestReportsRxe0WithHonestNotes) {
  const auto r = run_lab({"--hosts", "1", "--run", "h1:rdmacheck doctor --json"});
  ASSERT_EQ(r.exit, 0) << r.console;
  EXPECT_EQ(run_exit(r, "h1"), 0);
  const auto& doc = run_output(r, "h1");
  ASSERT_TRUE(doc.is_object()) << r.console;
  EXPECT_EQ(printed_violations(doc, "doctor.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(doc["exit_status"], 0);
  EXPECT_EQ(doc["summary"]["fail"], 0);
  EXPECT_EQ(doc["summary"]["warn"], 0);
  EXPECT_EQ(id_set(doc["findings"]),
            (std::set<std::string>{"software-rdma-device", "gid-index-0-not-routable",
                                   "link-speed-unknown", "memlock-low-but-privileged",
                                   "mtu-not-jumbo", "pcie-not-applicable", "cpufreq-not-exposed",
                                   "lossless-not-readable"}))
      << doc["findings"].dump(2);
  const auto* port = check(doc, "port-state", "rxe0/1");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ((*port)["facts"]["state"], "ACTIVE");
  EXPECT_EQ((*port)["facts"]["rate_gbps"], 2.5);  // sysfs: "2.5 Gb/sec (1X SDR)"
  const auto* gids = check(doc, "gid-table", "rxe0/1");
  ASSERT_NE(gids, nullptr);
  EXPECT_EQ((*gids)["facts"]["gid_index_for_peers_in"]["198.18.0.0/24"], 1);
  const auto* mtu = check(doc, "mtu", "rxe0/1");
  ASSERT_NE(mtu, nullptr);
  EXPECT_EQ((*mtu)["facts"]["active_mtu_bytes"], 1024);  // ibv_query_port agrees with 1500 - 96
  EXPECT_EQ((*mtu)["facts"]["roce_mtu_allowed_bytes"], 1024);
  const auto* fw = check(doc, "firewall", "host");
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ((*fw)["facts"]["blocking_rules"], 0);
  // The ruleset as the kernel walks it: nft's JSON first (scripts/setup
  // installs nftables; iptables-nft's own tables, when it has any, come from
  // iptables-save, which the source then names too).
  EXPECT_EQ((*fw)["facts"]["source"].get<std::string>().rfind("nft -j list ruleset", 0), 0u)
      << (*fw)["facts"].dump();
}

}  // namespace
}  // namespace rdmacheck::labtest
