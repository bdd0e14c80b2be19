#include "perf/counters.h"

#include <gtest/gtest.h>

namespace rdmacheck::perf {
namespace {

TEST(Counters, ReadsTheRxeCaptureButNotItsSettings) {
  const Counters c = read_counters(FsRoot(RDMACHECK_FIXTURES "/rxe-lab-h1"), "rxe0", 1);
  EXPECT_TRUE(c.contains("hw_counters/out_of_seq_request"));
  EXPECT_TRUE(c.contains("hw_counters/sent_pkts"));
  EXPECT_FALSE(c.contains("hw_counters/lifespan"));
  EXPECT_TRUE(read_counters(FsRoot(RDMACHECK_FIXTURES "/rxe-lab-h1"), "rxe0", 2).empty());
}

TEST(Counters, DeltaKeepsOnlyWhatRose) {
  const Counters before = {{"a", 5}, {"b", 7}, {"c", 9}};
  const Counters after = {{"a", 5}, {"b", 10}, {"c", 1}, {"d", 4}};
  EXPECT_EQ(delta(before, after), (Counters{{"b", 3}}));
}

TEST(Counters, LossOnBothSidesIsOneFindingWithARate) {
  // The field notes' loss run: the receiver's out_of_seq_request, the sender's
  // completer_retry_err and rcvd_seq_err rose.
  const Counters client = {{"hw_counters/sent_pkts", 9000},
                           {"hw_counters/rcvd_pkts", 1000},
                           {"hw_counters/completer_retry_err", 12},
                           {"hw_counters/rcvd_seq_err", 8}};
  const Counters server = {{"hw_counters/sent_pkts", 1000},
                           {"hw_counters/rcvd_pkts", 9000},
                           {"hw_counters/out_of_seq_request", 30}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "packet-loss-during-test");
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("50 events, 5000 per million packets (10000 packets"),
            std::string::npos)
      << f[0].summary;
  ASSERT_EQ(f[0].evidence.size(), 2u);
  EXPECT_EQ(f[0].evidence[0],
            "h2: hw_counters/completer_retry_err +12, hw_counters/rcvd_seq_err +8");
  EXPECT_EQ(f[0].evidence[1], "h1: hw_counters/out_of_seq_request +30");
}

TEST(Counters, CleanRunHasNoFindingsAndCongestionIsItsOwn) {
  const Counters clean = {{"hw_counters/sent_pkts", 100}, {"hw_counters/rdma_sends", 100}};
  EXPECT_TRUE(counter_findings(clean, clean, "a", "b", 0).empty());
  const Counters cnp = {{"hw_counters/np_cnp_sent", 4}};
  const auto f = counter_findings(Counters{}, cnp, "a", "b", 1000);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, "congestion-during-test");
  EXPECT_NE(f[0].summary.find("4000 per million"), std::string::npos) << f[0].summary;
}

}  // namespace
}  // namespace rdmacheck::perf
