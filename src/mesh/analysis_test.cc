// The analysis over synthetic matrices: the figures below are made up for
// each scenario (named by what they imitate), in the ranges the 4-host
// QEMU lab shows for Soft-RoCE (round trips of a few hundred µs, a few Gb/s),
// with a deterministic jitter of a few percent. Real captures of the same
// scenarios are held by tests/lab/mesh_lab_test.cc.
#include "mesh/analysis.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace rdmacheck::mesh {
namespace {

std::vector<std::string> names(int n) {
  std::vector<std::string> v;
  for (int i = 1; i <= n; ++i) v.push_back("h" + std::to_string(i));
  return v;
}

Probe good(int from, int to) {
  // A few percent of jitter that differs from direction to direction.
  const double jitter = ((from * 7 + to * 3) % 5) / 100.0;
  return Probe{.from = from,
               .to = to,
               .pings_sent = 50,
               .pings_ok = 50,
               .rtt_us = 400 * (1 + jitter),
               .bw_gbps = 3.0 * (1 - jitter)};
}

std::vector<Probe> healthy(int n) {
  std::vector<Probe> ps;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) ps.push_back(good(a, b));
    }
  }
  return ps;
}

std::vector<std::string> ids(const Analysis& an) {
  std::vector<std::string> v;
  for (const auto& f : an.findings)
    v.push_back(std::string(id_name(f)) + (f.host.empty() ? "" : "@" + f.host) +
                (f.subject.find('-') != std::string::npos ? "@" + f.subject : ""));
  return v;
}

TEST(MeshAnalysis, HealthyMeshIsOneOkFinding) {
  auto an = analyse(names(4), healthy(4));
  ASSERT_EQ(an.findings.size(), 1u);
  EXPECT_EQ(an.findings[0].id, FindingId::kMeshHealthy);
  EXPECT_EQ(an.findings[0].severity, Severity::kOk);
  EXPECT_NE(an.findings[0].summary.find("all 6 pairs of 4 hosts"), std::string::npos);
  ASSERT_TRUE(an.m.latency_us[0][3]);
  EXPECT_FALSE(an.m.latency_us[2][2]);  // the diagonal is never measured
  EXPECT_EQ(exit_status(an.findings), 0);
}

// One rank (mpirun without a hostfile, on this machine): nothing was tested,
// and the mesh may not call that healthy.
TEST(MeshAnalysis, OneHostIsNoMesh) {
  auto an = analyse(names(1), {});
  ASSERT_EQ(an.findings.size(), 1u);
  EXPECT_EQ(an.findings[0].id, FindingId::kMeshTooFewHosts);
  EXPECT_EQ(an.findings[0].severity, Severity::kFail);
  EXPECT_EQ(exit_status(an.findings), 2);
}

// netem delay on one host: every pair it has is 20 ms slower.
TEST(MeshAnalysis, DelayOnOneHostNamesThatHost) {
  auto ps = healthy(4);
  for (auto& p : ps) {
    if (p.from == 2 || p.to == 2) p.rtt_us += 20000;
  }
  auto an = analyse(names(4), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-bad-host@h3"});
  EXPECT_EQ(an.findings[0].evidence.size(), 3u);
  EXPECT_NE(an.findings[0].evidence[0].find("latency 20.4 ms"), std::string::npos)
      << an.findings[0].evidence[0];
}

// netem loss on one host: its pairs lose pings and bandwidth.
TEST(MeshAnalysis, LossOnOneHostNamesThatHost) {
  auto ps = healthy(5);
  for (auto& p : ps) {
    if (p.from == 0 || p.to == 0) {
      p.pings_ok = 45;
      p.bw_gbps = 0.3;
    }
  }
  auto an = analyse(names(5), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-bad-host@h1"});
  EXPECT_NE(an.findings[0].evidence[0].find("10.0 % of pings lost"), std::string::npos);
}

// A slow link between two hosts whose other pairs are fine.
TEST(MeshAnalysis, OneSlowPairIsNamedAsThePair) {
  auto ps = healthy(4);
  for (auto& p : ps) {
    if ((p.from == 0 && p.to == 3) || (p.from == 3 && p.to == 0)) p.bw_gbps = 0.5;
  }
  auto an = analyse(names(4), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-bad-pair@h1-h4"});
  EXPECT_NE(an.findings[0].summary.find("bandwidth 0.50 Gb/s"), std::string::npos);
  EXPECT_EQ(exit_status(an.findings), 1);
}

// A firewall between exactly two hosts: the pair carries the connection
// layer's own diagnosis, and the other five pairs pass.
TEST(MeshAnalysis, FirewalledPairIsUnreachableWithItsDiagnosis) {
  auto ps = healthy(4);
  for (auto& p : ps) {
    if ((p.from == 1 && p.to == 2) || (p.from == 2 && p.to == 1)) {
      p.failed = conn::Stage::kTraffic;
      p.error = "RC send: transport retry counter exceeded";
      p.pings_ok = 0;
      p.bw_gbps = -1;
      Finding d = make_finding(FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection,
                               "RoCE packets from h2 never reach h3");
      d.fix = "look for a firewall rule dropping UDP 4791";
      p.findings.push_back(d);
    }
  }
  auto an = analyse(names(4), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-unreachable-pair@h2-h3"});
  const auto& f = an.findings[0];
  EXPECT_EQ(f.severity, Severity::kFail);
  EXPECT_NE(f.summary.find("RoCE packets from h2 never reach h3"), std::string::npos);
  EXPECT_EQ(f.fix, "look for a firewall rule dropping UDP 4791");
  EXPECT_NE(f.evidence[0].find("stopped at traffic"), std::string::npos);
  int unreachable = 0;
  for (const auto& p : an.pairs) unreachable += p.unreachable ? 1 : 0;
  EXPECT_EQ(unreachable, 1);
}

// A host without rxe: nothing of it connects; the rest of the mesh is measured.
TEST(MeshAnalysis, HostWithoutDeviceIsNamedAndTheRestMeasured) {
  auto ps = healthy(4);
  for (auto& p : ps) {
    if (p.from == 3 || p.to == 3) {
      p.failed = p.from == 3 ? conn::Stage::kLocalSetup : conn::Stage::kHandshake;
      p.error = "no RDMA device";
      p.pings_ok = 0;
      p.bw_gbps = -1;
      if (p.from == 3) {
        p.findings.push_back(make_finding(FindingId::kNoRdmaDevice, Severity::kFail, Layer::kDevice,
                                          "this host has no RDMA device"));
      }
    }
  }
  auto an = analyse(names(4), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-bad-host@h4"});
  EXPECT_NE(an.findings[0].summary.find("h4: no pair with h4 connected (3 of 3"),
            std::string::npos);
  EXPECT_NE(an.findings[0].summary.find("no RDMA device"), std::string::npos);
  ASSERT_TRUE(an.m.latency_us[0][1]);  // the others were measured
}

// Two hosts: a bad pair cannot say which host is to blame.
TEST(MeshAnalysis, TwoHostsBlameThePairNotAHost) {
  auto ps = healthy(2);
  for (auto& p : ps) p.failed = conn::Stage::kQpSetup;
  auto an = analyse(names(2), ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-unreachable-pair@h1-h2"});
}

// The probes of a mesh document captured in the lab (tests/fixtures/README.md).
std::vector<Probe> captured(const std::string& name, std::vector<std::string>& hosts) {
  std::ifstream f(std::string(RDMACHECK_FIXTURES "/mesh/") + name);
  const auto doc = nlohmann::json::parse(f);
  hosts = doc["hosts"].get<std::vector<std::string>>();
  std::vector<Probe> ps;
  for (const auto& p : doc["probes"]) ps.push_back(probe_from_json(p).value());
  return ps;
}

TEST(MeshAnalysis, AHealthyMeshOnALoadedHostIsNotAnOutlier) {
  // Every pair of the first round was slow (h1-h4 4.3 ms, h2-h3 3.3 ms
  // against 1.9 ms), with pings spread as widely as that: load, not a path.
  std::vector<std::string> hosts;
  const auto ps = captured("lab-4hosts-healthy-loaded.json", hosts);
  const auto an = analyse(hosts, ps);
  EXPECT_EQ(ids(an), std::vector<std::string>{"mesh-healthy"});
  EXPECT_EQ(exit_status(an.findings), 0);
}

TEST(MeshAnalysis, TheCapturedDelayIsStillNamed) {
  // 20 ms of netem delay on h3: its least round trips exceed the fleet by
  // 20 ms, ten times its pings' spread.
  std::vector<std::string> hosts;
  const auto ps = captured("lab-4hosts-delay-h3.json", hosts);
  EXPECT_EQ(ids(analyse(hosts, ps)), std::vector<std::string>{"mesh-bad-host@h3"});
}

TEST(MeshAnalysis, ASteadyExcessBeyondThePingsSpreadIsAnOutlier) {
  // The same figures as a busy host's, but steady: every ping of h1-h4 at
  // 4.3 ms give or take 0.1 ms is the path.
  auto ps = healthy(4);
  for (auto& p : ps) {
    p.rtt_median_us = p.rtt_us * 1.05;
    if ((p.from == 0 && p.to == 3) || (p.from == 3 && p.to == 0)) {
      p.rtt_us = 4300;
      p.rtt_median_us = 4400;
    }
  }
  EXPECT_EQ(ids(analyse(names(4), ps)), std::vector<std::string>{"mesh-bad-pair@h1-h4"});
  for (auto& p : ps) {
    if (p.rtt_us == 4300) p.rtt_median_us = 9000;  // spread 4.7 ms > excess 3.9 ms
  }
  EXPECT_EQ(ids(analyse(names(4), ps)), std::vector<std::string>{"mesh-healthy"});
}

TEST(MeshAnalysis, ReferenceIsMedianAndScaledMad) {
  auto r = reference({1, 2, 3, 4, 100});
  EXPECT_DOUBLE_EQ(r.median, 3);
  EXPECT_DOUBLE_EQ(r.mad, 1.4826 * 1);  // deviations 2 1 0 1 97
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(MeshAnalysis, DoctorFindingsAreSummarisedAcrossHosts) {
  auto memlock =
      make_finding(FindingId::kMemlockTooLow, Severity::kWarn, Layer::kDevice, "memlock is 8 MiB");
  memlock.subject = "host";
  auto mtu =
      make_finding(FindingId::kMtuMismatch, Severity::kWarn, Layer::kDevice, "eth0 MTU 1500");
  mtu.subject = "eth0";
  auto ok = make_finding(FindingId::kSoftwareRdmaDevice, Severity::kOk, Layer::kDevice,
                         "rxe0/1 is Soft-RoCE");
  std::vector<std::vector<Finding>> per = {{memlock, ok}, {memlock, mtu}, {memlock}};
  auto s = summarise_doctor(names(3), per);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].summary, "memlock is 8 MiB (on all 3 hosts)");
  EXPECT_EQ(s[0].host, "");
  EXPECT_EQ(s[1].summary, "h2: eth0 MTU 1500");
  EXPECT_EQ(s[1].host, "h2");
  per[2].clear();
  EXPECT_EQ(summarise_doctor(names(3), per)[0].summary,
            "memlock is 8 MiB (on 2 of 3 hosts: h1, h2)");
}

}  // namespace
}  // namespace rdmacheck::mesh

namespace rdmacheck::mesh {
namespace {

// What a rank sends rank 0 reads back as it was.
TEST(MeshProbe, JsonRoundTrip) {
  Probe p{.from = 2,
          .to = 0,
          .round = 1,
          .failed = conn::Stage::kCmConnect,
          .error = "e",
          .pings_sent = 5,
          .pings_ok = 4,
          .rtt_us = 12.5,
          .bw_gbps = -1,
          .loss_counters = 3};
  auto f = make_finding(FindingId::kRocePacketsLost, Severity::kFail, Layer::kConnection, "lost");
  f.evidence = {"a", "b"};
  f.host = "h1";
  p.findings.push_back(f);
  auto back = probe_from_json(nlohmann::json::parse(to_json(p).dump()));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(to_json(*back), to_json(p));
  EXPECT_TRUE(to_json(p)["bw_gbps"].is_null());
  EXPECT_FALSE(probe_from_json(nlohmann::json{{"from", 1}}));
}

// What a rank sends is checked before it is cast: the mesh fuzz target's
// {"from":222222222222222222222222227,...} (a double far above INT_MAX) was
// undefined behaviour in nlohmann's get<int> (fuzz/corpus/mesh/README).
TEST(MeshProbe, NumbersOutOfTheirTypesRangeAreRefused) {
  Probe p{.from = 0, .to = 1, .round = 1, .failed = conn::Stage::kDone, .loss_counters = 3};
  const nlohmann::json good = to_json(p);
  ASSERT_TRUE(probe_from_json(good));
  for (const auto& [key, bad] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"from", 2.22222e26},
                                                           {"from", 1.5},
                                                           {"to", uint64_t{1} << 40},
                                                           {"round", int64_t{-1} << 40},
                                                           {"pings_ok", "3"},
                                                           {"loss_counters", -1}}) {
    auto j = good;
    j[key] = bad;
    auto r = probe_from_json(j);
    ASSERT_FALSE(r) << key << " = " << bad.dump();
    EXPECT_NE(r.error().message().find("a probe from a rank"), std::string::npos);
  }
}

}  // namespace
}  // namespace rdmacheck::mesh
