#include "perf/report.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

// Below, with the schema tests.
std::vector<std::string> schema_violations_of_perf(const nlohmann::json& doc);

PerfReport bw_report() {
  PerfReport r;
  r.ok = true;
  r.options.target.host = "h1";
  r.bw.push_back(BwSample{65536, 1000, 0.5, 1.048576, 1.2, 125, 0.002});
  r.local_counters = {{"hw_counters/sent_pkts", 64000}};
  Finding f;
  f.id = FindingId::kPacketLossDuringTest;
  f.severity = Severity::kWarn;
  f.layer = Layer::kPerformance;
  f.summary = "lost";
  f.evidence = {"h1: hw_counters/out_of_seq_request +3"};
  r.findings.push_back(f);
  return r;
}

TEST(Report, TextIsRenderedFromTheJsonDocument) {
  const auto doc = to_json(bw_report());
  EXPECT_EQ(doc["command"], "bw");
  EXPECT_EQ(doc["results"][0]["size"], 65536);
  const std::string text = format_document(doc);
  EXPECT_NE(text.find("BW avg[Gb/s]"), std::string::npos) << text;
  EXPECT_NE(text.find("      65536         1000         1.2000         1.0486       125.00"),
            std::string::npos)
      << text;
  // The one finding renderer, with the pointer to its catalogue entry.
  EXPECT_NE(text.find("WARN packet-loss-during-test: lost\n"
                      "       evidence: h1: hw_counters/out_of_seq_request +3\n"
                      "       (rdmacheck explain packet-loss-during-test)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("counters local: hw_counters/sent_pkts+64000"), std::string::npos) << text;
  EXPECT_NE(text.find("result: PASS"), std::string::npos) << text;
}

// perftest 4.5's --output: "%lf" of MiB/s (Gb/s with --report_gbits), of
// the average latency, of Mpps; a script ported from it reads the same number.
TEST(Report, OutputPrintsOneNumberPerSizeInPerftestsUnits) {
  const PerfReport r = bw_report();
  EXPECT_EQ(format_text(FigureView{r, Figure::kBandwidth}), "125.000000\n");
  EXPECT_EQ(format_text(FigureView{r, Figure::kBandwidth, true}), "1.048576\n");
  EXPECT_EQ(format_text(FigureView{r, Figure::kMessageRate}), "0.002000\n");
  EXPECT_EQ(format_text(FigureView{r, Figure::kLatency}), "");  // a bw run has none
  PerfReport lat;
  lat.ok = true;
  lat.lat.push_back(LatSample{2, true, LatStats{1000, 1.5, 2.25, 2.5, 9, 12, 20, 0.5}, {}});
  EXPECT_EQ(format_text(FigureView{lat, Figure::kLatency}), "2.500000\n");  // the mean
  lat.ok = false;  // a failed run has no figure to print
  EXPECT_EQ(format_text(FigureView{lat, Figure::kLatency}), "");
  EXPECT_EQ(to_json(FigureView{r, Figure::kBandwidth}), to_json(r));
}

// A run that measured nothing prints no table: a header over no rows reads
// as figures lost, not as a failure before the first size.
TEST(Report, FailedBwWithoutFiguresPrintsNoTableHeader) {
  PerfReport r;
  r.options.target.host = "h1";
  r.options.spec.kind = Kind::kBw;
  r.ok = false;
  r.failed = conn::Stage::kLocalSetup;
  r.error = "ibv_get_device_list: Function not implemented";
  const std::string text = format_text(r);
  EXPECT_EQ(text.find("#bytes"), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(79, '-')), std::string::npos) << text;
  EXPECT_NE(text.find("failed at "), std::string::npos) << text;
  EXPECT_NE(text.find("result: FAIL"), std::string::npos) << text;
}

TEST(Report, IntervalLine) {
  EXPECT_EQ(interval_line(65536, 20000, 2.0),
            "     65536 B       5.24 Gb/s      625.00 MiB/s   10.0 kpps  over 2.0 s\n");
  // Soft-RoCE in the lab: a few hundred 64 KiB messages a second, not "0.000 Mpps".
  EXPECT_EQ(interval_line(65536, 404, 2.0),
            "     65536 B      0.106 Gb/s       12.62 MiB/s     202 pps  over 2.0 s\n");
}

// Each row's message rate in the unit it reaches 1 in, and the run's spread
// under it; the JSON keeps mpps and names each figure's unit in its key.
TEST(Report, TableRowsCarryTheirRateUnitAndTheSpread) {
  PerfReport r = bw_report();
  r.bw[0].interval_gbps = {1.1, 0.9, 1.0, 1.06};
  r.bw[0].interval_s = 0.125;
  const auto doc = to_json(r);
  EXPECT_EQ(schema_violations_of_perf(doc), std::vector<std::string>{});
  const auto& i = doc["results"][0]["intervals"];
  EXPECT_EQ(i["count"], 4);
  EXPECT_EQ(i["gbps"], nlohmann::json({1.1, 0.9, 1.0, 1.06}));
  EXPECT_DOUBLE_EQ(i["min_gbps"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(i["median_gbps"].get<double>(), 1.03);
  EXPECT_DOUBLE_EQ(i["p99_gbps"].get<double>(), 1.1);
  EXPECT_EQ(doc["results"][0]["mpps"], 0.002);
  const std::string text = format_document(doc);
  EXPECT_NE(text.find("MsgRate\n"), std::string::npos) << text;
  EXPECT_NE(text.find("125.00    2.00 kpps\n"), std::string::npos) << text;
  EXPECT_NE(text.find("over 4 intervals of 0.125 s: min 0.900, median 1.03, p99 1.10 Gb/s\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(spread_text(r.bw[0]),
            "over 4 intervals of 0.125 s: min 0.900, median 1.03, p99 1.10 Gb/s");
}

// A run without intervals (bidirectional) says null; a document saved before
// they were kept has no key at all: both print without a spread line.
TEST(Report, NoIntervalsNoSpreadLine) {
  const PerfReport r = bw_report();
  auto doc = to_json(r);
  EXPECT_TRUE(doc["results"][0]["intervals"].is_null());
  EXPECT_EQ(spread_text(r.bw[0]), "");
  EXPECT_EQ(format_document(doc).find("intervals of"), std::string::npos);
  doc["results"][0].erase("intervals");
  const std::string text = format_document(doc);
  EXPECT_EQ(text.find("intervals of"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00 kpps"), std::string::npos) << text;
}

TEST(Report, LatencyTableAndFailure) {
  PerfReport r;
  r.options.target.host = "h1";
  r.options.spec.kind = Kind::kLat;
  r.options.spec.histogram = true;
  LatSample l;
  l.size = 2;
  l.stats = lat_stats({10, 20, 30});
  l.histogram = histogram({10, 20, 30});
  r.lat.push_back(l);
  r.ok = false;
  r.failed = conn::Stage::kTraffic;
  r.error = "completion: transport retry counter exceeded";
  const std::string text = format_text(r);
  EXPECT_NE(text.find("med[us]"), std::string::npos) << text;
  EXPECT_NE(text.find("half round trips"), std::string::npos) << text;
  EXPECT_NE(text.find("failed at traffic: completion"), std::string::npos) << text;
  EXPECT_NE(text.find("result: FAIL"), std::string::npos) << text;
}

}  // namespace
}  // namespace rdmacheck::perf

// The checked-in schema describes what the printer emits, and the checker
// catches a document that breaks it.
#include <fstream>

#include "testing/schema_check.h"

namespace rdmacheck::perf {
namespace {

nlohmann::json load_schema() {
  std::ifstream in(RDMACHECK_SCHEMAS "/perf.schema.json");
  return nlohmann::json::parse(in);
}

std::vector<std::string> schema_violations_of_perf(const nlohmann::json& doc) {
  return schema_violations(load_schema(), doc);
}

TEST(Schema, BwAndLatReportsConform) {
  const auto schema = load_schema();
  EXPECT_EQ(schema_violations(schema, to_json(bw_report())), std::vector<std::string>{});
  PerfReport lat;
  lat.options.spec.kind = Kind::kLat;
  lat.options.spec.histogram = true;
  LatSample l;
  l.size = 2;
  l.stats = lat_stats({1, 2, 3});
  l.histogram = histogram({1, 2, 3});
  lat.lat.push_back(l);
  lat.failed = conn::Stage::kTraffic;
  EXPECT_EQ(schema_violations(schema, to_json(lat)), std::vector<std::string>{});
}

TEST(Schema, BidirectionalAndValidatedReportsConformAndPrint) {
  PerfReport r = bw_report();
  r.options.spec.bidir = true;
  r.options.spec.validate = true;
  r.bw[0].bidir = true;
  r.bw[0].out_gbps = 0.5;
  r.bw[0].in_gbps = 0.548576;
  r.validation_checks = 2;
  const auto doc = to_json(r);
  EXPECT_EQ(schema_violations(load_schema(), doc), std::vector<std::string>{});
  EXPECT_EQ(doc["results"][0]["directions"]["in_gbps"], 0.548576);
  EXPECT_EQ(doc["validation"]["checks"], 2);
  EXPECT_TRUE(doc["cpu"].is_null());  // not asked for
  const std::string text = format_document(doc);
  EXPECT_NE(text.find("out 0.5000 + in 0.5486 Gb/s"), std::string::npos) << text;
  EXPECT_NE(text.find("both directions at once"), std::string::npos) << text;
}

TEST(Schema, CpuUtilisationOfBothSides) {
  PerfReport r = bw_report();
  r.options.spec.cpu_util = true;
  r.local_cpu = PerfReport::CpuUse{0.99, 1.0};
  const auto doc = to_json(r);
  EXPECT_EQ(schema_violations(load_schema(), doc), std::vector<std::string>{});
  EXPECT_DOUBLE_EQ(doc["cpu"]["local"]["percent"].get<double>(), 99.0);
  EXPECT_TRUE(doc["cpu"]["peer"].is_null());  // an older or failed server sent none
  const std::string text = format_document(doc);
  EXPECT_NE(text.find("cpu: local 99.0 % of 1.00 s"), std::string::npos) << text;
}

TEST(Schema, ViolationsAreFound) {
  const auto schema = load_schema();
  auto doc = to_json(bw_report());
  doc["command"] = "ping";
  doc["spec"]["qps"] = 0;
  doc["counters"]["local"]["x"] = -1;
  doc["surprise"] = true;
  doc.erase("elapsed_ms");
  const auto v = schema_violations(schema, doc);
  ASSERT_EQ(v.size(), 5u) << nlohmann::json(v).dump(2);
  EXPECT_NE(nlohmann::json(v).dump().find("$.spec.qps: 0 is below the minimum 1"),
            std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::perf
