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
  EXPECT_EQ(f[0].id, FindingId::kPacketLossDuringTest);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_NE(f[0].summary.find("50 events during the test, 5000 per million packets (10000 packets"),
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
  EXPECT_EQ(f[0].id, FindingId::kCongestionDuringTest);
  EXPECT_NE(f[0].summary.find("4000 per million"), std::string::npos) << f[0].summary;
}

// The healthy lab at 681e41c: one retransmission in a lat test, the request had
// arrived (the peer counted it twice, no gap): README's transcript numbers.
TEST(Counters, OneLateAckOnAHealthyRunIsInfoNotLoss) {
  const Counters client = {{"hw_counters/sent_pkts", 401},
                           {"hw_counters/rcvd_pkts", 400},
                           {"hw_counters/completer_retry_err", 1}};
  const Counters server = {{"hw_counters/sent_pkts", 400},
                           {"hw_counters/rcvd_pkts", 402},
                           {"hw_counters/duplicate_request", 1}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kAckLate);
  EXPECT_TRUE(is_counter_finding(f[0].id));
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_NE(f[0].summary.find("although they had arrived"), std::string::npos) << f[0].summary;
  EXPECT_EQ(f[0].summary.find("lost on the way ("), std::string::npos) << f[0].summary;
  ASSERT_EQ(f[0].evidence.size(), 2u);
  EXPECT_EQ(f[0].evidence[0], "h2: hw_counters/completer_retry_err +1");
  EXPECT_EQ(f[0].evidence[1], "h1: hw_counters/duplicate_request +1");
}

TEST(Counters, ManyLateAcksWarn) {
  const Counters client = {{"hw_counters/sent_pkts", 500}, {"hw_counters/completer_retry_err", 20}};
  const Counters server = {{"hw_counters/rcvd_pkts", 500}, {"hw_counters/duplicate_request", 20}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kAckLate);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
}

// A duplicate next to a sequence gap is the go-back-N resend after a loss, not a late ACK.
TEST(Counters, DuplicatesWithAGapAreLoss) {
  const Counters client = {{"hw_counters/sent_pkts", 10000},
                           {"hw_counters/completer_retry_err", 3}};
  const Counters server = {{"hw_counters/rcvd_pkts", 10000},
                           {"hw_counters/duplicate_request", 2},
                           {"hw_counters/out_of_seq_request", 5}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kPacketLossDuringTest);
  EXPECT_EQ(f[0].severity, Severity::kWarn);
  EXPECT_EQ(f[0].evidence[1],
            "h1: hw_counters/duplicate_request +2, hw_counters/out_of_seq_request +5");
}

// The last request of a burst lost: the sender timed out, the receiver saw
// neither a gap nor a duplicate (the resend was the PSN it expected).
TEST(Counters, TimeoutWithoutDuplicateIsALostRequest) {
  const Counters client = {{"hw_counters/sent_pkts", 100}, {"hw_counters/completer_retry_err", 1}};
  const Counters server = {{"hw_counters/rcvd_pkts", 100}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kPacketLossDuringTest);
  EXPECT_NE(f[0].summary.find("1 events during the test, 10000 per million"), std::string::npos)
      << f[0].summary;
}

TEST(Counters, TimeoutsWithoutThePeersCountersSayTheyCannotTell) {
  const Counters client = {{"hw_counters/sent_pkts", 100}, {"hw_counters/completer_retry_err", 1}};
  const auto f = counter_findings(client, Counters{}, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kPacketLossDuringTest);
  EXPECT_NE(f[0].summary.find("not available"), std::string::npos) << f[0].summary;
}

TEST(Counters, RnrIsItsOwnCauseWithItsOwnRate) {
  const Counters client = {{"hw_counters/sent_pkts", 100000}, {"hw_counters/rcvd_rnr_err", 3}};
  const Counters server = {{"hw_counters/rcvd_pkts", 100000}, {"hw_counters/send_rnr_err", 3}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kReceiverNotReadyDuringTest);
  EXPECT_EQ(f[0].severity, Severity::kInfo);  // 60 per million
  const Counters busy = {{"hw_counters/sent_pkts", 1000}, {"hw_counters/rcvd_rnr_err", 30}};
  const Counters peer = {{"hw_counters/rcvd_pkts", 1000}};
  EXPECT_EQ(counter_findings(busy, peer, "h2", "h1", 0)[0].severity, Severity::kWarn);
}

// The lab's netem duplicate 5 % on h1 (a write lat test, 2026-12-01): h2 saw
// four duplicate requests although h1 never retransmitted (copies made on the
// way), and h1 saw one, the resend of h2's single ACK timeout (a late ACK).
TEST(Counters, DuplicatesTheSenderNeverRetransmittedAreCopiesOnTheWay) {
  const Counters client = {{"hw_counters/sent_pkts", 105},
                           {"hw_counters/rcvd_pkts", 104},
                           {"hw_counters/completer_retry_err", 1},
                           {"hw_counters/duplicate_request", 4}};
  const Counters server = {{"hw_counters/sent_pkts", 100},
                           {"hw_counters/rcvd_pkts", 102},
                           {"hw_counters/duplicate_request", 1}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].id, FindingId::kPacketsDuplicated);
  EXPECT_TRUE(is_counter_finding(f[0].id));
  EXPECT_EQ(f[0].severity, Severity::kWarn);  // 4 in 105 packets
  EXPECT_NE(f[0].summary.find("4 events"), std::string::npos) << f[0].summary;
  EXPECT_EQ(f[0].evidence.back(), "h2 saw 4 duplicate requests while h1 retransmitted nothing");
  EXPECT_EQ(f[1].id, FindingId::kAckLate);  // h2's one timeout, seen once by h1
  EXPECT_NE(f[1].summary.find("1 events"), std::string::npos) << f[1].summary;
}

// Go-back-N after a NAK resends without a timeout: with a sequence gap in
// the test, duplicates are never taken for copies.
TEST(Counters, DuplicatesNextToANakAreNotCopies) {
  const Counters client = {{"hw_counters/sent_pkts", 1000}, {"hw_counters/rcvd_seq_err", 2}};
  const Counters server = {{"hw_counters/rcvd_pkts", 1000}, {"hw_counters/duplicate_request", 3}};
  const auto f = counter_findings(client, server, "h2", "h1", 0);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, FindingId::kPacketLossDuringTest);
}

}  // namespace
}  // namespace rdmacheck::perf
