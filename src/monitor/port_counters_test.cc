// The local port counters as Prometheus counters, over a copy of a real
// capture (tests/fixtures/rxe-lab-2nic-dup: rxe0 and rxe1 of a lab guest,
// hw_counters as rdma_rxe lays them out) whose values the test then moves.
#include "monitor/port_counters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/promtool.h"
#include "testing/temp_dir.h"

namespace rdmacheck::monitor {
namespace {

namespace fs = std::filesystem;

class Ports : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_util::make_temp_dir("port-counters");
    fs::copy(std::string(RDMACHECK_FIXTURES) + "/rxe-lab-2nic-dup", dir_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void set(const std::string& device, const std::string& name, uint64_t v) const {
    std::ofstream(
        FsRoot(dir_).host_path("/sys/class/infiniband/" + device + "/ports/1/hw_counters/" + name))
        << v << "\n";
  }
  fs::path dir_;
};

// The line of a series in the exposition, "" when absent.
std::string line_of(const std::string& text, const std::string& counter,
                    const std::string& device) {
  const std::string head = "rdmacheck_port_events_total{counter=\"" + counter + "\",device=\"" +
                           device + "\",port=\"1\",prober=\"a\"}";
  const auto at = text.find(head);
  if (at == std::string::npos) return "";
  return text.substr(at, text.find('\n', at) - at);
}

TEST_F(Ports, WhatEachCounterGrewIsCountedFromTheFirstReadOn) {
  Registry r;
  declare_port_metrics(r);
  PortCounterTracker t{FsRoot(dir_)};
  set("rxe0", "rcvd_seq_err", 7);  // counted before the monitor looked: not its to count
  set("rxe0", "lifespan", 10);     // the kernel's setting beside the counters (ms)
  t.sample(r, "a", "rxe0", 1);
  auto text = r.exposition();
  EXPECT_EQ(line_of(text, "hw_counters/rcvd_seq_err", "rxe0"),
            "rdmacheck_port_events_total{counter=\"hw_counters/rcvd_seq_err\",device=\"rxe0\","
            "port=\"1\",prober=\"a\"} 0")
      << text;
  // The config file beside the counters is not a counter; another device is not read.
  EXPECT_EQ(text.find("lifespan"), std::string::npos) << text;
  EXPECT_EQ(line_of(text, "hw_counters/rcvd_seq_err", "rxe1"), "") << text;

  set("rxe0", "rcvd_seq_err", 10);
  set("rxe0", "sent_pkts", 500);
  t.sample(r, "a", "rxe0", 1);
  set("rxe0", "rcvd_seq_err", 12);
  t.sample(r, "a", "rxe0", 1);
  text = r.exposition();
  EXPECT_NE(line_of(text, "hw_counters/rcvd_seq_err", "rxe0").find("} 5"), std::string::npos)
      << text;
  EXPECT_NE(line_of(text, "hw_counters/sent_pkts", "rxe0").find("} 500"), std::string::npos)
      << text;
}

TEST_F(Ports, ACounterThatWentBackIsABaselineNotANegativeStep) {
  Registry r;
  declare_port_metrics(r);
  PortCounterTracker t{FsRoot(dir_)};
  set("rxe1", "duplicate_request", 100);
  t.sample(r, "a", "rxe1", 1);
  set("rxe1", "duplicate_request", 3);  // the driver reloaded
  t.sample(r, "a", "rxe1", 1);
  set("rxe1", "duplicate_request", 4);
  t.sample(r, "a", "rxe1", 1);
  const auto text = r.exposition();
  EXPECT_NE(line_of(text, "hw_counters/duplicate_request", "rxe1").find("} 1"), std::string::npos)
      << text;
  // No round chose a device: nothing to read.
  t.sample(r, "a", "", 1);
  EXPECT_EQ(r.exposition(), text);
}

TEST_F(Ports, PromtoolAcceptsThePortCounters) {
#ifndef RDMACHECK_PROMTOOL
  GTEST_SKIP() << "promtool was not found when the build was configured (apt install prometheus)";
#else
  Registry r;
  declare_port_metrics(r);
  PortCounterTracker t{FsRoot(dir_)};
  t.sample(r, "a", "rxe0", 1);
  set("rxe0", "rcvd_pkts", 9);
  t.sample(r, "a", "rxe0", 1);
  const auto c = test_util::promtool_check_metrics(RDMACHECK_PROMTOOL, r.exposition());
  EXPECT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output, "") << "promtool's lint found something";
#endif
}

}  // namespace
}  // namespace rdmacheck::monitor
