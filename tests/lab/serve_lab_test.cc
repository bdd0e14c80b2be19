// The connection layer's other transports and its failure modes, on the real
// stack: UD and RDMA-write ping-pongs, an unreachable peer, the memlock
// limit. (The server outliving killed, garbage and oversize clients is in
// abuse_lab_test.cc, in the same boot as the rest of the abuse.)
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

TEST(PingLab, UdAndWriteArePingPongsToo) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 --ud -n 3 --json", "--run",
                          "h2:rdmacheck ping h1 --write -n 3 --json", "--run",
                          "h2:cat /run/lab/h1/serve.log"});
  ASSERT_EQ(r.exit, 0) << r.console;
  const auto& ud = run_output(r, "h2", 0);
  ASSERT_TRUE(ud.is_object()) << r.console;
  EXPECT_EQ(ud["transport"], "ud");
  EXPECT_EQ(ud["summary"]["received"], 3);
  // A UD message is at most one MTU: the ladder stops there.
  EXPECT_EQ(ud["ladder"].back()["size"], 1024);
  const auto& wr = run_output(r, "h2", 1);
  ASSERT_TRUE(wr.is_object()) << r.console;
  EXPECT_EQ(wr["op"], "write");
  EXPECT_EQ(wr["summary"]["received"], 3);
  EXPECT_EQ(wr["ladder"].back()["size"], 8192);
  EXPECT_EQ(wr["ladder"].back()["ok"], true);
  // The write echoes landed through MRs registered at a random IOVA (a device
  // that ignored it would have failed them): rxe took ibv_reg_mr_iova, so the
  // server noted no fallback to the virtual address. The UD ping's Q_Keys,
  // random on both sides, went through the handshake.
  const std::string log = run_output(r, "h2", 2).get<std::string>();
  EXPECT_NE(log.find("start: ping rc/write"), std::string::npos) << log;
  EXPECT_NE(log.find("start: ping ud/send"), std::string::npos) << log;
  EXPECT_EQ(log.find("at its virtual address"), std::string::npos) << log;
}

TEST(PingLab, UnreachableAddressIsNamedInBoundedTime) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping 198.18.0.99 --json"});
  EXPECT_EQ(r.exit, 2) << r.console;
  const auto& p = run_output(r, "h2");
  EXPECT_EQ(finding_ids(p["findings"]), std::vector<std::string>{"peer-unreachable"});
  EXPECT_LE(p["elapsed_ms"].get<double>(), 20000);  // ping's default --timeout
}

TEST(PingLab, MemlockLimitIsNamed) {
  // Root ignores RLIMIT_MEMLOCK through CAP_IPC_LOCK: drop it, as an ordinary user is.
  const auto r = run_lab({"--run",
                          "h2:capsh --drop=cap_ipc_lock -- -c 'ulimit -l 8; rdmacheck ping h1 "
                          "-s 1000000 --json'"});
  EXPECT_EQ(r.exit, 2) << r.console;
  const auto& p = run_output(r, "h2");
  EXPECT_EQ(p["failed_stage"], "local setup") << p.dump(2);
  EXPECT_EQ(finding_ids(p["findings"]), std::vector<std::string>{"memlock-too-low"});
}

}  // namespace
}  // namespace rdmacheck::labtest
