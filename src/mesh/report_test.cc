// The report of a synthetic 3-host mesh (made-up figures, as in
// analysis_test.cc) against the checked-in schema, and its text.
#include "mesh/report.h"

#include <gtest/gtest.h>

#include "host/ticket.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace rdmacheck::mesh {
namespace {

MeshReport three_hosts(bool firewalled) {
  MeshReport r;
  r.hosts = {"h1", "h2", "h3"};
  r.server_errors = {"", "", ""};
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      Probe p{.from = a,
              .to = b,
              .pings_sent = 20,
              .pings_ok = 20,
              .rtt_us = 300.0 + a + b,
              .bw_gbps = 2.5,
              .seconds = 1.5};
      if (firewalled && a + b == 3) {  // h2 <-> h3
        p.failed = conn::Stage::kTraffic;
        p.error = "transport retry counter exceeded";
        p.pings_ok = 0;
        p.bw_gbps = -1;
      }
      r.probes.push_back(p);
    }
  }
  r.rounds = {{0, 1, 3.2}, {1, 1, 3.1}, {2, 1, 3.3}};
  r.analysis = analyse(r.hosts, r.probes);
  r.elapsed_s = 11;
  return r;
}

// The document as rdmacheck-mesh prints it: with a ticket header.
nlohmann::json printed(const MeshReport& r) {
  return with_ticket(to_json(r), TicketHeader{.version = "0.1.0",
                                              .kernel = "6.1.0-28-amd64",
                                              .rdma_core = "44.0",
                                              .timestamp = "2026-12-01T14:00:00Z",
                                              .command_line = "rdmacheck mesh --json"});
}

TEST(MeshReport, JsonHoldsToTheSchema) {
  auto schema = load_schema(RDMACHECK_SCHEMAS, "mesh.schema.json");
  ASSERT_TRUE(schema) << schema.error().message();
  for (bool fw : {false, true}) {
    const auto doc = printed(three_hosts(fw));
    EXPECT_EQ(perf::schema_violations(*schema, doc), std::vector<std::string>{});
    EXPECT_EQ(doc["schema_version"], rdmacheck::kSchemaVersion);
    EXPECT_EQ(doc["matrices"]["latency_us"][0][1], 301.0);
    EXPECT_TRUE(doc["matrices"]["latency_us"][1][1].is_null());
    EXPECT_EQ(doc["exit_status"], fw ? 2 : 0);
  }
  auto bad = printed(three_hosts(false));
  bad["schema_version"] = rdmacheck::kSchemaVersion + 1;
  EXPECT_FALSE(perf::schema_violations(*schema, bad).empty());
}

TEST(MeshReport, TextShowsTheMatricesRoundsAndCulprit) {
  const auto text = format_text(three_hosts(true));
  EXPECT_NE(text.find("3 hosts, 3 pairs in 3 rounds"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(text.find("rounds: 3.2 s, 3.1 s, 3.3 s (all 9.6 s)"), std::string::npos) << text;
  EXPECT_NE(text.find("h2 <-> h3: cannot connect"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL mesh-unreachable-pair"), std::string::npos) << text;
  EXPECT_NE(text.find("mesh: FAIL"), std::string::npos);
  EXPECT_NE(format_text(three_hosts(false)).find("mesh: PASS"), std::string::npos);
}

// --no-color and a pipe: no escape codes; a terminal: the verdict and the
// hosts' severities in colour (as check's layers), through TextStyle.
TEST(MeshReport, TextIsColouredOnlyWhenTheStyleSaysSo) {
  MeshReport r = three_hosts(true);
  r.doctor = {make_finding(FindingId::kCpuGovernorPowersave, Severity::kWarn, Layer::kDevice,
                           "powersave governor on 1 of 3 hosts")};
  EXPECT_EQ(format_text(r).find('\033'), std::string::npos);
  const auto coloured = format_text(r, TextStyle{.color = true});
  EXPECT_NE(coloured.find("mesh: \033[1;31mFAIL\033[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("  \033[1;33mwarn\033[0m cpu-governor-powersave"), std::string::npos)
      << coloured;
}

}  // namespace
}  // namespace rdmacheck::mesh
