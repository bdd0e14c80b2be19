#include "monitor/peers.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rdmacheck::monitor {
namespace {

std::vector<std::string> names(const std::vector<Peer>& v) {
  std::vector<std::string> n;
  n.reserve(v.size());
  for (const auto& p : v) n.push_back(p.name);
  return n;
}

TEST(Peers, OneHostPerLineWithPortsCommentsAndDuplicates) {
  const auto r = parse_peers(
      "# the fleet\n"
      "h1\n"
      "  h2:18600   # another serve\n"
      "\n"
      "198.18.0.3\n"
      "fe80::1\n"
      "[fd00::4]:18700\n"
      "[fd00::5]\n"
      "h1\n"
      "h1:18515\n",
      18515, "peers");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(names(*r), (std::vector<std::string>{"h1", "h2:18600", "198.18.0.3", "fe80::1",
                                                 "[fd00::4]:18700", "fd00::5"}));
  EXPECT_EQ((*r)[1].host, "h2");
  EXPECT_EQ((*r)[1].port, 18600);
  EXPECT_EQ((*r)[3].host, "fe80::1");
  EXPECT_EQ((*r)[3].port, 18515);
  EXPECT_EQ((*r)[4].host, "fd00::4");
  EXPECT_EQ((*r)[4].port, 18700);
}

TEST(Peers, ABadLineIsNamedWithItsNumber) {
  auto r = parse_peers("h1\nh2 h3\n", 18515, "fleet.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "fleet.txt line 2: 'h2 h3': one host or address per line");
  r = parse_peers("h1:99999\n", 18515, "fleet.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "fleet.txt line 1: 'h1:99999': '99999' is not a port (1-65535)");
  r = parse_peers("h1:\n", 18515, "f");
  EXPECT_FALSE(r);
  r = parse_peers(":18515\n", 18515, "f");
  EXPECT_FALSE(r);
  r = parse_peers("[fd00::1\n", 18515, "f");
  EXPECT_FALSE(r);
}

TEST(Peers, AFileWithoutPeersOrMissingIsAnError) {
  const auto dir = test_util::make_temp_dir("peers");
  const auto empty = (dir / "empty").string();
  std::ofstream(empty) << "# nobody yet\n\n";
  auto r = load_peers(empty, 18515);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("no peer in it"), std::string::npos) << r.error().message();
  r = load_peers((dir / "missing").string(), 18515);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().call, "open");
  std::filesystem::remove_all(dir);
}

// An MPI hostfile as Open MPI's mpirun(1) documents it; the lab writes one
// too (/run/lab/hostfile: "198.18.0.1 slots=1").
TEST(Peers, AnMpiHostfileGivesItsHosts) {
  auto r = parse_hostfile(
      "# cluster\n"
      "node01 slots=4\n"
      "node02 slots=4 max_slots=8\n"
      "198.18.0.3 slots=1\n"
      "\n"
      "node01 slots=2\n"
      "node05\n",
      18515, "hosts");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(names(*r), (std::vector<std::string>{"node01", "node02", "198.18.0.3", "node05"}));
  r = parse_hostfile("node01 slots=4\nnode02 node03\n", 18515, "hosts");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(),
            "hosts line 2: 'node03' after the host: a hostfile line is 'HOST [slots=N] "
            "[max_slots=N]'");
}

// Slurm's compressed node lists, as SLURM_JOB_NODELIST holds them.
TEST(Peers, ASlurmNodeListExpandsAsScontrolDoes) {
  auto r = expand_hostlist("node[01-03,7],gpu-a1,r[1-2]-n[08-09]");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, (std::vector<std::string>{"node01", "node02", "node03", "node7", "gpu-a1", "r1-n08",
                                          "r1-n09", "r2-n08", "r2-n09"}));
  r = expand_hostlist("c[098-101]");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<std::string>{"c098", "c099", "c100", "c101"}));
  for (const char* bad : {"node[01-", "node]1[", "n[3-1]", "n[a-b]", "n[1-200000]", ""}) {
    EXPECT_FALSE(expand_hostlist(bad)) << bad;
  }
  EXPECT_EQ(expand_hostlist("n[3-1]").error().message(),
            "host list: '[3-1]': '3-1' is not N or N-M");
}

TEST(Peers, TheProberLeavesItselfOut) {
  const auto all = parse_peers("h1\nh2\n198.18.0.3\nh4.example\n", 18515, "f");
  ASSERT_TRUE(all);
  EXPECT_EQ(names(without_self(*all, {"h2.example", "h2"}, {"127.0.0.1", "198.18.0.3"})),
            (std::vector<std::string>{"h1", "h4.example"}));
  // This machine's own names and addresses are found (loopback at least).
  const auto addrs = self_addresses();
  EXPECT_NE(std::find(addrs.begin(), addrs.end(), "127.0.0.1"), addrs.end());
  EXPECT_FALSE(self_names().empty());
}

}  // namespace
}  // namespace rdmacheck::monitor
