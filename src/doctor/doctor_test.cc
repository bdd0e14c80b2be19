#include "doctor/doctor.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

// The finding ids doctor promises, each produced by at least one fixture.
const std::vector<FindingId> kPromised = {
    FindingId::kNoRdmaDevice,        FindingId::kPortDown,
    FindingId::kGidRoceV1Only,       FindingId::kLinkSpeedBelowCapability,
    FindingId::kPcieLinkDowngraded,  FindingId::kPcieBandwidthBelowPortRate,
    FindingId::kMtuNotJumbo,         FindingId::kCpuGovernorPowersave,
    FindingId::kMemlockTooLow,       FindingId::kFirewallBlocksRoce,
    FindingId::kErrorCountersNonzero};

std::set<FindingId> report_ids(const std::string& fixture) {
  const Fixture fx(fixture);
  const auto r = run_doctor(fx.fs(), fx.src());
  std::set<FindingId> out;
  for (const auto& f : r.findings()) out.insert(f.id);
  return out;
}

TEST(Doctor, EveryPromisedIdComesFromSomeFixture) {
  std::set<FindingId> seen;
  for (const char* name :
       {"no-rdma-vm", "mlx5-gen3x8", "mlx4-degraded", "rxe-lab-doctor-firewall"}) {
    const auto ids_here = report_ids(name);
    seen.insert(ids_here.begin(), ids_here.end());
  }
  for (const auto& id : kPromised) EXPECT_TRUE(seen.count(id)) << id;
}

TEST(Doctor, HealthyFixturesHaveNoneOfThem) {
  for (const char* name : {"mlx5-healthy", "rxe-lab-doctor-healthy"}) {
    const Fixture fx(name);
    const auto r = run_doctor(fx.fs(), fx.src());
    for (const auto& f : r.findings()) {
      EXPECT_LT(f.severity, Severity::kWarn) << name << ": " << f.id;
      // Soft-RoCE on a 1500-byte netdev is told, as a note, what MTU it gets.
      if (std::string(name) == "rxe-lab-doctor-healthy" && f.id == FindingId::kMtuNotJumbo)
        continue;
      EXPECT_EQ(std::count(kPromised.begin(), kPromised.end(), f.id), 0) << name << ": " << f.id;
    }
    EXPECT_EQ(r.exit_status(), 0) << name;
  }
}

TEST(Doctor, ExitStatusFollowsTheWorstFinding) {
  const auto status = [](const char* name) {
    const Fixture fx(name);
    return run_doctor(fx.fs(), fx.src()).exit_status();
  };
  EXPECT_EQ(status("mlx5-gen3x8"), 1);
  EXPECT_EQ(status("mlx4-degraded"), 2);
  EXPECT_EQ(status("no-rdma-vm"), 2);
  EXPECT_EQ(status("rxe-lab-doctor-firewall"), 2);
}

TEST(Doctor, TextAndJsonCarryTheSameReport) {
  const Fixture fx("mlx5-gen3x8");
  const auto r = run_doctor(fx.fs(), fx.src());
  const auto j = to_json(r);
  const std::string text = format_text(r, {.detail = Detail::kVerbose});
  EXPECT_EQ(j["host"]["hostname"], "cx5-gen3");
  EXPECT_EQ(r.exit_status(), 1);
  EXPECT_EQ(j["findings"].size(), r.findings().size());
  for (const auto& f : j["findings"]) {
    EXPECT_NE(text.find(f["id"].get<std::string>() + ": " + f["summary"].get<std::string>()),
              std::string::npos)
        << f["id"];
  }
  for (const auto& c : j["checks"]) {
    EXPECT_NE(text.find(c["check"].get<std::string>()), std::string::npos);
    for (const auto& [k, v] : c["facts"].items()) {
      // The text names a fact without the unit its JSON key carries ("soft_bytes" -> "soft").
      const std::string shown =
          k.substr(0, k.rfind('_') != std::string::npos &&
                              (k.ends_with("_bytes") || k.ends_with("_gbps") || k.ends_with("_gts"))
                          ? k.rfind('_')
                          : k.size());
      EXPECT_NE(text.find(shown), std::string::npos) << k;
    }
  }
  // Grouped by layer, in order.
  const auto dev = text.find("DEVICE LAYER");
  const auto conn = text.find("CONNECTION LAYER");
  const auto perf = text.find("PERFORMANCE LAYER");
  EXPECT_LT(dev, conn);
  EXPECT_LT(conn, perf);
  EXPECT_NE(text.find("0 failures, 6 warnings, 3 notes (exit status 1)"), std::string::npos)
      << text;
}

size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

// As ibv_devinfo vs -v: by default one line per check and the findings in
// full; the facts only with -v. The healthy ConnectX-6 Dx fixture has one
// note (GID 0 is v1 link-local), so its default text is the checks, that
// note and the summary.
TEST(Doctor, DefaultTextIsOneLinePerCheckPlusFindings) {
  const Fixture fx("mlx5-healthy");
  const auto r = run_doctor(fx.fs(), fx.src());
  const std::string brief = format_text(r);
  const std::string verbose = format_text(r, {.detail = Detail::kVerbose});
  size_t finding_lines = 0;
  for (const auto& f : r.findings()) {
    // Its line, evidence, fix, and the pointer to its catalogue entry.
    finding_lines += 1 + f.evidence.size() + (f.fix.empty() ? 0 : 1) + 1;
  }
  ASSERT_EQ(r.findings().size(), 1u) << brief;
  // header, blank + title per layer (6), one line per check, the finding, blank + summary.
  EXPECT_EQ(count_lines(brief), 1 + 6 + r.checks.size() + finding_lines + 2) << brief;
  EXPECT_GT(count_lines(verbose), count_lines(brief) + r.checks.size()) << verbose;
  EXPECT_EQ(brief.find("rate "), std::string::npos) << brief;  // a fact: -v only
  EXPECT_NE(verbose.find("rate                   100 Gb/s"), std::string::npos) << verbose;
  // The degraded fixture's findings are all there by default, evidence and fix included.
  const Fixture deg("mlx5-gen3x8");
  const auto rd = run_doctor(deg.fs(), deg.src());
  const std::string text = format_text(rd);
  for (const auto& f : rd.findings()) {
    EXPECT_NE(text.find(std::string(id_name(f)) + ": " + f.summary), std::string::npos) << f.id;
    for (const auto& e : f.evidence) EXPECT_NE(text.find(e), std::string::npos) << e;
    EXPECT_NE(text.find("(rdmacheck explain " + std::string(id_name(f)) + ")\n"), std::string::npos)
        << f.id;
  }
}

// Numbers in the JSON carry their unit in the key; the text shows the unit
// after the number (the fixture's memlock is 64 KiB, its link 100 GbE at MTU
// 1500 on a Gen3 x8 slot: tests/fixtures/README.md).
TEST(Doctor, FactsAreNumbersWithTheUnitInTheKey) {
  const Fixture fx("mlx5-gen3x8");
  const auto r = run_doctor(fx.fs(), fx.src());
  const auto j = to_json(r);
  auto facts = [&](const std::string& check) {
    for (const auto& c : j["checks"]) {
      if (c["check"] == check) return c["facts"];
    }
    return nlohmann::json();
  };
  EXPECT_EQ(facts("memlock")["soft_bytes"], 65536);
  EXPECT_EQ(facts("port-state")["rate_gbps"], 100);
  EXPECT_EQ(facts("netdev")["speed_gbps"], 100);
  EXPECT_EQ(facts("mtu")["netdev_mtu_bytes"], 1500);
  EXPECT_EQ(facts("pcie")["link_gts"], 8);
  EXPECT_EQ(facts("pcie")["link_width"], 8);
  const std::string text = format_text(r, {.detail = Detail::kVerbose});
  EXPECT_NE(text.find("soft                   64 KiB\n"), std::string::npos) << text;
  EXPECT_NE(text.find("netdev_mtu             1500 B\n"), std::string::npos) << text;
  EXPECT_NE(text.find("speed                  100 Gb/s\n"), std::string::npos) << text;
}

// A lab capture replays to what doctor reported when it made the capture.
TEST(Doctor, LabCaptureReplaysToItsOwnReport) {
  for (const char* name : {"rxe-lab-doctor-healthy", "rxe-lab-doctor-firewall"}) {
    const Fixture fx(name);
    const auto replay = to_json(run_doctor(fx.fs(), fx.src()));
    const auto text = fx.fs().read("/capture/doctor.json");
    ASSERT_TRUE(text.ok()) << name;
    const auto original = nlohmann::json::parse(*text);
    EXPECT_EQ(replay["findings"], original["findings"]) << name;
    EXPECT_EQ(replay["summary"], original["summary"]) << name;
  }
}

}  // namespace
}  // namespace rdmacheck::doctor
