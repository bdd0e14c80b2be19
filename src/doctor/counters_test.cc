#include "doctor/counters.h"

#include <gtest/gtest.h>

#include "doctor/test_fixture.h"

namespace rdmacheck::doctor {
namespace {

using namespace testing;

TEST(Counters, Meanings) {
  EXPECT_EQ(counter_meaning("out_of_sequence").kind, CounterKind::kError);
  EXPECT_EQ(counter_meaning("out_of_seq_request").kind, CounterKind::kError);  // rxe
  EXPECT_EQ(counter_meaning("np_cnp_sent").kind, CounterKind::kCongestion);
  EXPECT_EQ(counter_meaning("rx_write_requests").kind, CounterKind::kTraffic);
  EXPECT_EQ(counter_meaning("sent_pkts").kind, CounterKind::kTraffic);
  // A counter rdmacheck does not know, named as an error.
  EXPECT_EQ(counter_meaning("new_fancy_err").kind, CounterKind::kError);
}

TEST(Counters, NonZeroErrorsShownWithTheirMeaning) {
  const auto rs = check_counters(Fixture("mlx5-gen3x8").m());
  ASSERT_EQ(ids(rs),
            (std::vector<std::string>{"error-counters-nonzero", "congestion-counters-nonzero"}));
  const Finding& f = rs[0].findings[0];
  EXPECT_EQ(f.severity, Severity::kWarn);
  EXPECT_EQ(f.summary, "mlx5_0 port 1 has 6 error counters above zero");
  EXPECT_NE(std::find(f.evidence.begin(), f.evidence.end(),
                      "hw_counters/out_of_sequence = 18734: packets arrived with a PSN gap: loss "
                      "on the path; the sender retransmits go-back-N"),
            f.evidence.end());
  EXPECT_EQ(rs[0].findings[1].severity, Severity::kInfo);
}

TEST(Counters, RxeAfterLossInTheLab) {
  const ScratchCopy s("rxe-lab-doctor-healthy", "counters-rxe");
  s.write("/sys/class/infiniband/rxe0/ports/1/hw_counters/out_of_seq_request", "12\n");
  const auto rs = check_counters(Fixture(s.name()).m());
  const Finding* f = find(rs, FindingId::kErrorCountersNonzero);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence[0].find("out_of_seq_request = 12: requests arrived with a PSN gap"),
            std::string::npos);
}

TEST(Counters, ZeroCountersAreQuiet) {
  for (const char* name : {"mlx5-healthy", "rxe-lab-doctor-healthy"}) {
    const auto rs = check_counters(Fixture(name).m());
    EXPECT_TRUE(ids(rs).empty()) << name;
    EXPECT_NE(fact(rs[0], "counters_read"), "0") << name;
  }
}

}  // namespace
}  // namespace rdmacheck::doctor
