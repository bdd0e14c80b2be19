// The lab itself, proven on the real stack: guests boot, rxe0 comes up as
// the kernel reports it, and the lab's own failures are bounded and named.
#include <gtest/gtest.h>

#include <fstream>

#include "lab/lab_harness.h"
#include "testing/temp_dir.h"

namespace rdmacheck::labtest {
namespace {

TEST(Lab, DevicesInAGuestShowRxe0WithTheHostsRoceV2Gid) {
  const auto r = run_lab({"--hosts", "1", "--run", "h1:rdmacheck devices --json", "--run",
                          "h1:cat /sys/class/infiniband/rxe0/ports/1/gids/1", "--run",
                          "h1:ibv_devinfo -d rxe0 -v", "--run",
                          "h1:uname -r; dpkg-query -W -f '${Version}\\n' libibverbs1"});
  ASSERT_EQ(r.exit, 0) << r.console;
  // lab --json is a document like every command's, with the same exit key.
  EXPECT_EQ(printed_violations(r.doc, "lab.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(r.doc["exit_status"], r.exit);
  EXPECT_EQ(r.doc["ticket"]["command_line"].get<std::string>().rfind("rdmacheck lab --json", 0),
            0u);
  const auto& doc = run_output(r, "h1", 0);
  ASSERT_TRUE(doc.is_object()) << r.console;
  EXPECT_EQ(printed_violations(doc, "devices.schema.json"), std::vector<std::string>{});
  EXPECT_EQ(doc["exit_status"], run_exit(r, "h1", 0));
  // The ticket header says what the guest runs: its kernel, and the
  // rdma-core release dpkg installed ("44.0-2" -> "44.0"), read from the
  // libibverbs the process loaded.
  const std::string versions = run_output(r, "h1", 3).get<std::string>();
  const auto& ticket = doc["ticket"];
  EXPECT_EQ(versions.substr(0, versions.find('\n')), ticket["kernel"].get<std::string>());
  const std::string pkg = versions.substr(versions.find('\n') + 1);
  EXPECT_EQ(pkg.substr(0, pkg.find('-')), ticket["rdma_core"].get<std::string>()) << versions;
  EXPECT_EQ(ticket["command_line"], "rdmacheck devices --json");
  ASSERT_EQ(ticket["devices"].size(), 1u);
  EXPECT_EQ(ticket["devices"][0]["name"], "rxe0");
  ASSERT_EQ(doc["devices"].size(), 1u);
  const auto& dev = doc["devices"][0];
  EXPECT_EQ(dev["name"], "rxe0");
  EXPECT_EQ(dev["driver"], "rxe");
  const auto& port = dev["ports"][0];
  EXPECT_EQ(port["port"], 1);
  EXPECT_EQ(port["state"], "ACTIVE");
  EXPECT_EQ(port["phys_state"], "LinkUp");
  EXPECT_EQ(port["link_layer"], "Ethernet");
  EXPECT_EQ(port["netdev"], "eth0");
  // Port MTUs as ibv_devinfo (ibv_query_port) reports them in the same guest.
  const std::string devinfo = run_output(r, "h1", 2).get<std::string>();
  const auto field = [&](const std::string& name) {
    const auto at = devinfo.find(name + ":");
    if (at == std::string::npos) return -1;
    return std::atoi(devinfo.c_str() + devinfo.find_first_not_of(" \t", at + name.size() + 1));
  };
  EXPECT_EQ(port["active_mtu_bytes"], field("active_mtu")) << devinfo;
  EXPECT_EQ(port["max_mtu_bytes"], field("max_mtu")) << devinfo;
  EXPECT_EQ(port["active_mtu_bytes"], 1024);  // rxe on a 1500-byte netdev
  bool found = false;
  for (const auto& g : port["gids"]) {
    if (g["type"] == "RoCE v2" && g["address"] == "198.18.0.1" && g["netdev"] == "eth0") {
      found = true;
      // The same GID the kernel's sysfs table holds at that index.
      const std::string sysfs = run_output(r, "h1", 1).get<std::string>();
      EXPECT_EQ(sysfs.substr(0, 39), g["gid"].get<std::string>());
    }
  }
  EXPECT_TRUE(found) << port.dump(2);
}

TEST(Lab, MissingQemuIsNamedWithItsPackage) {
  const auto r = run_lab({"--run", "h1:true"}, "PATH=/nonexistent");
  EXPECT_EQ(r.exit, 3);
  EXPECT_NE(r.console.find("qemu-system-x86_64 not found: install 'qemu-system-x86'"),
            std::string::npos)
      << r.console;
}

TEST(Lab, ThreeHostsOnOneWireAndConcurrentSessions) {
  const auto r =
      run_lab({"--hosts", "3", "--run", "h2:rdmacheck ping h1 -n 10 --interval 0.1 --json", "--run",
               "h3:rdmacheck ping h1 -n 10 --interval 0.1 --json", "--run",
               "h3:rdmacheck ping h2 -n 1 --json"});
  ASSERT_EQ(r.exit, 2) << r.console;  // h2 serves nothing: the last run must fail, named
  using Run = std::pair<std::string, size_t>;
  for (const auto& [host, n] : std::vector<Run>{{"h2", 0}, {"h3", 0}, {"h3", 1}}) {
    EXPECT_EQ(printed_violations(run_output(r, host, n), "ping.schema.json"),
              std::vector<std::string>{})
        << host << " run " << n;
  }
  // The ticket names the device the ping used.
  EXPECT_EQ(run_output(r, "h2")["ticket"]["devices"][0]["name"], "rxe0");
  EXPECT_EQ(run_output(r, "h2")["summary"]["received"], 10) << r.console;
  EXPECT_EQ(run_output(r, "h3", 0)["summary"]["received"], 10) << r.console;
  EXPECT_EQ(finding_ids(run_output(r, "h3", 1)["findings"]),
            std::vector<std::string>{"server-not-listening"});
  EXPECT_EQ(run_output(r, "h3", 1)["host"], "h2");
}

TEST(Lab, SetupFailureIsReportedNotHung) {
  const auto r = run_lab({"--hosts", "1", "--setup", "h1:exit 7", "--run", "h1:true"});
  EXPECT_EQ(r.exit, 3) << r.console;
  EXPECT_NE(r.doc["error"].get<std::string>().find("setup command 1 failed with exit status 7"),
            std::string::npos)
      << r.doc.dump(2);
}

// The guests see what the user sees: a file of the host's /tmp (where a
// checkout may live) is there in the guest, under the guest's own writable
// /tmp; and a run command the shell cannot run at all ends the lab at once,
// named, instead of leaving the other steps to wait for the deadline.
TEST(Lab, HostTmpIsVisibleAndACommandThatCannotRunEndsTheLabAtOnce) {
  const auto dir = test_util::make_temp_dir("lab-tmp");
  std::ofstream(dir / "marker") << "seen from the guest\n";
  const std::string missing = (dir / "no-such-script.sh").string();
  const auto r = run_lab({"--hosts", "1", "--timeout", "400", "--run",
                          "h1:cat " + (dir / "marker").string() + " && touch /tmp/guest-writes",
                          "--run", "h1:" + missing, "--run", "h1:sleep 1000"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit, 3) << r.console;
  const auto& seen = run_output(r, "h1", 0);
  ASSERT_TRUE(seen.is_string()) << r.console;
  EXPECT_NE(seen.get<std::string>().find("seen from the guest"), std::string::npos) << r.console;
  EXPECT_NE(r.doc["error"].get<std::string>().find(
                "h1 failed: run command 2 could not be run (exit status 127"),
            std::string::npos)
      << r.doc.dump(2);
  EXPECT_LT(r.seconds, 200) << "the lab waited for its deadline";
  EXPECT_FALSE(std::filesystem::exists("/tmp/guest-writes")) << "the guest wrote the host's /tmp";
}

TEST(Lab, AGuestThatHangsIsKilledAtTheDeadline) {
  // 20 s: a guest boots in about 5 (docs/lab.md), so the deadline lands in 'run'.
  const auto r = run_lab({"--hosts", "1", "--timeout", "20", "--run", "h1:sleep 1000"});
  EXPECT_EQ(r.exit, 3) << r.console;
  EXPECT_LT(r.seconds, 40);
  EXPECT_NE(r.doc["error"].get<std::string>().find("deadline of 20 s reached (h1 at 'run')"),
            std::string::npos)
      << r.doc.dump(2);
}

}  // namespace
}  // namespace rdmacheck::labtest
