// The connection layer's other transports and its failure modes, on the real
// stack: UD and RDMA-write ping-pongs, an unreachable peer, the memlock
// limit, and a server that outlives killed, garbage and oversize clients.
#include <gtest/gtest.h>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

TEST(PingLab, UdAndWriteArePingPongsToo) {
  const auto r = run_lab({"--run", "h2:rdmacheck ping h1 --ud -n 3 --json", "--run",
                          "h2:rdmacheck ping h1 --write -n 3 --json"});
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

TEST(ServeLab, OutlivesKilledGarbageAndOversizeClients) {
  const auto r = run_lab({
      "--run",
      "h2:rdmacheck ping h1 -n 100 --interval 0.1 >/dev/null & sleep 4; kill -9 $!; wait; true",
      "--run",
      "h2:exec 3<>/dev/tcp/h1/4792; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; sleep 1",
      "--run",
      "h2:exec 3<>/dev/tcp/h1/4792; printf '\\x7f\\xff\\xff\\xff' >&3; sleep 1",
      "--run",
      "h2:rdmacheck ping h1 -n 2 --json",
      "--run",
      "h2:sleep 1; cat /run/lab/h1/serve.log",
  });
  ASSERT_EQ(r.exit, 0) << r.console;
  const auto& p = run_output(r, "h2", 3);
  ASSERT_TRUE(p.is_object()) << r.console;
  EXPECT_EQ(p["ok"], true);
  EXPECT_EQ(p["summary"]["received"], 2);
  const std::string log = run_output(r, "h2", 4).get<std::string>();
  EXPECT_NE(log.find("session 1 "), std::string::npos) << log;
  EXPECT_NE(log.find("client went away"), std::string::npos) << log;
  EXPECT_NE(log.find("frame length 1195725856 outside"), std::string::npos) << log;  // "GET "
  EXPECT_NE(log.find("frame length 2147483647 outside"), std::string::npos) << log;
  EXPECT_NE(log.find("session 4 198.18.0.2"), std::string::npos) << log;
  EXPECT_NE(log.find(": ok ("), std::string::npos) << log;
}

}  // namespace
}  // namespace rdmacheck::labtest
