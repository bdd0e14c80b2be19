#include "monitor/metrics.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "testing/promtool.h"

namespace rdmacheck::monitor {
namespace {

// A registry as the monitor's would look after a few probes.
void fill_sample(Registry& r) {
  EXPECT_TRUE(
      r.declare("rdmacheck_probe_sent_total", MetricType::kCounter, "Probes sent to the peer"));
  EXPECT_TRUE(r.declare("rdmacheck_peer_up", MetricType::kGauge,
                        "1 when the peer's last probe was answered"));
  EXPECT_TRUE(r.declare("rdmacheck_probe_rtt_seconds", MetricType::kHistogram,
                        "Round trip of answered probes\nin seconds", {0.0001, 0.001, 0.01}));
  const Labels h2{{"peer", "h2"}, {"transport", "rc"}};
  EXPECT_TRUE(r.add("rdmacheck_probe_sent_total", h2, 3));
  EXPECT_TRUE(r.set("rdmacheck_peer_up", {{"peer", "h2"}}, 1));
  EXPECT_TRUE(r.set("rdmacheck_peer_up", {{"peer", "odd \"name\"\\x\n"}}, 0));
  EXPECT_TRUE(r.observe("rdmacheck_probe_rtt_seconds", h2, 0.00005));
  EXPECT_TRUE(r.observe("rdmacheck_probe_rtt_seconds", h2, 0.0005));
  EXPECT_TRUE(r.observe("rdmacheck_probe_rtt_seconds", h2, 0.5));
}

TEST(Metrics, TheTextFormatWithHelpTypeEscapesAndCumulativeBuckets) {
  Registry r;
  fill_sample(r);
  EXPECT_EQ(r.exposition(),
            "# HELP rdmacheck_probe_sent_total Probes sent to the peer\n"
            "# TYPE rdmacheck_probe_sent_total counter\n"
            "rdmacheck_probe_sent_total{peer=\"h2\",transport=\"rc\"} 3\n"
            "# HELP rdmacheck_peer_up 1 when the peer's last probe was answered\n"
            "# TYPE rdmacheck_peer_up gauge\n"
            "rdmacheck_peer_up{peer=\"h2\"} 1\n"
            "rdmacheck_peer_up{peer=\"odd \\\"name\\\"\\\\x\\n\"} 0\n"
            "# HELP rdmacheck_probe_rtt_seconds Round trip of answered probes\\nin seconds\n"
            "# TYPE rdmacheck_probe_rtt_seconds histogram\n"
            "rdmacheck_probe_rtt_seconds_bucket{peer=\"h2\",transport=\"rc\",le=\"0.0001\"} 1\n"
            "rdmacheck_probe_rtt_seconds_bucket{peer=\"h2\",transport=\"rc\",le=\"0.001\"} 2\n"
            "rdmacheck_probe_rtt_seconds_bucket{peer=\"h2\",transport=\"rc\",le=\"0.01\"} 2\n"
            "rdmacheck_probe_rtt_seconds_bucket{peer=\"h2\",transport=\"rc\",le=\"+Inf\"} 3\n"
            "rdmacheck_probe_rtt_seconds_sum{peer=\"h2\",transport=\"rc\"} 0.50055\n"
            "rdmacheck_probe_rtt_seconds_count{peer=\"h2\",transport=\"rc\"} 3\n"
            "# HELP rdmacheck_monitor_series_refused_total Series the monitor did not create "
            "because its cap (20000) was reached\n"
            "# TYPE rdmacheck_monitor_series_refused_total counter\n"
            "rdmacheck_monitor_series_refused_total 0\n");
}

TEST(Metrics, WhatPrometheusWouldRejectIsRefusedHere) {
  Registry r(3);
  EXPECT_FALSE(r.declare("1bad", MetricType::kGauge, "x"));
  EXPECT_FALSE(r.declare("bad-name", MetricType::kGauge, "x"));
  EXPECT_FALSE(r.declare("h", MetricType::kHistogram, "x", {0.1, 0.1}));
  EXPECT_FALSE(r.declare("h", MetricType::kHistogram, "x", {}));
  ASSERT_TRUE(r.declare("c_total", MetricType::kCounter, "x"));
  EXPECT_FALSE(r.declare("c_total", MetricType::kGauge, "x")) << "declared twice";
  ASSERT_TRUE(r.declare("h_seconds", MetricType::kHistogram, "x", {1}));
  EXPECT_FALSE(r.set("c_total", {}, 1)) << "a counter is not set";
  EXPECT_FALSE(r.add("c_total", {}, -1)) << "a counter never goes down";
  EXPECT_FALSE(r.add("c_total", {}, std::nan("")));
  EXPECT_FALSE(r.add("c_total", {{"bad label", "v"}}));
  EXPECT_FALSE(r.add("c_total", {{"__name__", "v"}}));
  EXPECT_FALSE(r.observe("h_seconds", {{"le", "1"}}, 0.5)) << "le is the bucket's label";
  EXPECT_FALSE(r.add("undeclared_total", {}));
  // The cap: three series, the fourth refused and counted.
  EXPECT_TRUE(r.add("c_total", {{"peer", "a"}}));
  EXPECT_TRUE(r.add("c_total", {{"peer", "b"}}));
  EXPECT_TRUE(r.observe("h_seconds", {{"peer", "a"}}, 2));
  EXPECT_FALSE(r.add("c_total", {{"peer", "c"}}));
  EXPECT_TRUE(r.add("c_total", {{"peer", "a"}})) << "an existing series still counts";
  EXPECT_EQ(r.series(), 3u);
  EXPECT_NE(r.exposition().find("rdmacheck_monitor_series_refused_total 1\n"), std::string::npos);
  // A peer that left: its series go, and make room.
  r.forget("peer", "a");
  EXPECT_EQ(r.series(), 1u);
  EXPECT_EQ(r.exposition().find("peer=\"a\""), std::string::npos);
  EXPECT_TRUE(r.add("c_total", {{"peer", "c"}}));
}

TEST(Metrics, ValuesAsPrometheusSpellsThem) {
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(0.25), "0.25");
  EXPECT_EQ(format_value(INFINITY), "+Inf");
  EXPECT_EQ(format_value(-INFINITY), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(1e-7), "1e-07");
}

// Prometheus's own checker reads the output: promtool from Debian's
// prometheus package (scripts/setup --tests installs it; CMake finds it).
TEST(Metrics, PromtoolAcceptsTheExposition) {
#ifndef RDMACHECK_PROMTOOL
  GTEST_SKIP() << "promtool was not found when the build was configured (apt install prometheus)";
#else
  Registry r;
  fill_sample(r);
  const auto c = test_util::promtool_check_metrics(RDMACHECK_PROMTOOL, r.exposition());
  EXPECT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "") << "promtool's lint found something";
#endif
}

}  // namespace
}  // namespace rdmacheck::monitor
