// -T/--tclass and -S/--sl on the real stack: the traffic class reaches both
// hosts' QPs (read back from the device with ibv_query_qp after RTR) for
// ping, bw and lat. rxe keeps no service level (RoCE carries none on the
// wire; the kernel's rxe_av_from_attr copies only the GRH), which is read
// back as 0 and said in a warning.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

TEST(PriorityLab, TrafficClassAndServiceLevelReachBothQps) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 -T 106 -S 3 -n 2 --no-ladder --json",
                          "--run", "h2:rdmacheck bw h1 --tclass 106 --sl 3 -n 200 --json", "--run",
                          "h2:rdmacheck lat h1 -T 106 -S 3 -n 100 --json", "--run",
                          "h2:rdmacheck ping h1 -n 1 --no-ladder --json"});
  for (size_t n = 0; n < 3; ++n) {
    const auto& out = run_output(r, "h2", n);
    ASSERT_TRUE(out.is_object()) << r.console;
    EXPECT_EQ(run_exit(r, "h2", n) == 2, false) << out.dump(2);
    for (const char* side : {"local", "peer"}) {
      ASSERT_TRUE(out[side].is_object()) << n << " " << out.dump(2);
      EXPECT_EQ(out[side]["traffic_class"], 106) << n << " " << side;
      EXPECT_EQ(out[side]["sl"], 0) << n << " " << side;  // what rxe reports: see above
    }
    bool said = false;
    for (const auto& w : out["warnings"]) {
      said = said || w.get<std::string>().find("RoCE carries no SL") != std::string::npos;
    }
    EXPECT_TRUE(said) << out["warnings"].dump();
  }
  // Without -T/-S both QPs keep class 0, level 0.
  const auto& plain = run_output(r, "h2", 3);
  ASSERT_TRUE(plain.is_object()) << r.console;
  for (const char* side : {"local", "peer"}) {
    EXPECT_EQ(plain[side]["traffic_class"], 0) << side;
    EXPECT_EQ(plain[side]["sl"], 0) << side;
  }
}

}  // namespace
}  // namespace rdmacheck::labtest
