// perftest's -m, -u, --output and lat -D on the real stack, in one lab boot:
// the path MTU reaches both hosts' QPs (read back with ibv_query_qp after
// RTR, as PriorityLab does for -T/-S), a larger -m than the ports carry is
// lowered with a warning, --output prints one number, and lat -D runs
// several sizes (the server's write ping-pong follows at each barrier);
// --run_infinitely ends cleanly, counted, at SIGINT.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

bool has_warning(const nlohmann::json& out, const std::string& text) {
  for (const auto& w : out["warnings"]) {
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PerftestFlagsLab, MtuQpTimeoutOutputAndLatDuration) {
  const auto r =
      run_lab({"--run", "h2:rdmacheck bw h1 -m 512 -u 18 -n 200 --json", "--run",
               "h2:rdmacheck bw h1 -m 4096 -n 200 --json", "--run",
               "h2:rdmacheck bw h1 -n 200 --output bandwidth", "--run",
               "h2:rdmacheck lat h1 -D 1 -s 2,64 --json", "--run",
               // Ctrl-C once the first live line is out (on stderr: --json owns stdout).
               "h2:rdmacheck bw h1 --run_infinitely -D 0.5 --json 2>/tmp/live & "
               "until grep -q Gb/s /tmp/live; do sleep 0.1; done; kill -INT $!; wait $!"});
  // -m 512: both QPs carry 512, and the verdict's MTU is the QP's.
  const auto& small = run_output(r, "h2", 0);
  ASSERT_TRUE(small.is_object()) << r.console;
  EXPECT_NE(run_exit(r, "h2", 0), 2) << small.dump(2);
  for (const char* side : {"local", "peer"}) EXPECT_EQ(small[side]["path_mtu"], 512) << side;
  EXPECT_EQ(small["link"]["mtu"], 512);
  EXPECT_EQ(small["spec"]["path_mtu"], 512);
  EXPECT_EQ(small["spec"]["ack_timeout"], 18);
  // -m 4096 over rxe on a 1500-byte netdev: the active MTU (1024) wins, and it is said.
  const auto& big = run_output(r, "h2", 1);
  ASSERT_TRUE(big.is_object()) << r.console;
  const int active = big["local"]["active_mtu"].get<int>();
  EXPECT_LT(active, 4096);
  for (const char* side : {"local", "peer"}) EXPECT_EQ(big[side]["path_mtu"], active) << side;
  EXPECT_TRUE(has_warning(big, "-m 4096: the path MTU is")) << big["warnings"].dump();
  // --output bandwidth: stdout is one number, the Gb/s.
  const auto& figure = run_output(r, "h2", 2);
  EXPECT_EQ(run_exit(r, "h2", 2), 0) << r.console;
  ASSERT_TRUE(figure.is_number()) << figure.dump();
  EXPECT_GT(figure.get<double>(), 0);
  // lat -D 1 over two sizes: round trips in both, none refused.
  const auto& lat = run_output(r, "h2", 3);
  ASSERT_TRUE(lat.is_object()) << r.console;
  EXPECT_NE(run_exit(r, "h2", 3), 2) << lat.dump(2);
  ASSERT_EQ(lat["results"].size(), 2u) << lat.dump(2);
  for (const auto& x : lat["results"]) EXPECT_GT(x["round_trips"].get<int>(), 0) << x.dump();
  EXPECT_EQ(lat["spec"]["iterations"], 0);
  // --run_infinitely stopped by SIGINT: a clean report of the whole run, counted.
  const auto& forever = run_output(r, "h2", 4);
  ASSERT_TRUE(forever.is_object()) << r.console;
  EXPECT_NE(run_exit(r, "h2", 4), 2) << forever.dump(2);
  EXPECT_EQ(forever["ok"], true) << forever.dump(2);
  EXPECT_EQ(forever["spec"]["run_infinitely"], true);
  ASSERT_EQ(forever["results"].size(), 1u) << forever.dump(2);
  EXPECT_GT(forever["results"][0]["messages"].get<int64_t>(), 0);
  EXPECT_GE(forever["results"][0]["seconds"].get<double>(), 0.5);
}

}  // namespace
}  // namespace rdmacheck::labtest
