// `rdmacheck mesh` on four real guests in one boot (lab --hosts 4 --mesh:
// sshd, keys and an MPI hostfile): the healthy mesh first, then each fault
// set up over ssh from h1 right before its own mesh run and removed after,
// so the four scenarios share one boot. Each document is held to
// schemas/mesh.schema.json.
#include <gtest/gtest.h>

#include <string>

#include "lab/lab_harness.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace rdmacheck::labtest {
namespace {

const std::string kMesh =
    "mpirun --allow-run-as-root -np 4 --hostfile /run/lab/hostfile --map-by ppr:1:node "
    "--mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 "
    "/run/lab/bin/rdmacheck mesh --json";

std::vector<std::string> mesh_violations(const nlohmann::json& doc) {
  static const auto schema = load_schema(RDMACHECK_SCHEMAS, "mesh.schema.json");
  if (!schema) return {schema.error().message()};
  return perf::schema_violations(*schema, doc);
}

// Seconds a fault scenario's round may take: the firewalled pair's pings
// wait for it (rxe retransmits for longer than that), the others take 1-5 s.
constexpr int kFaultRound = 10;

// FAULT on the guests (over ssh) for one quick mesh, undone after it; the
// run's exit status is the mesh's. Each step has its own deadline, so a
// scenario that hangs fails alone instead of the whole boot.
std::string with_fault(const std::string& fault, const std::string& undo) {
  return "h1:timeout 60 " + fault + " && timeout 150 " + kMesh + " --quick --round-timeout " +
         std::to_string(kFaultRound) + "; rc=$?; timeout 60 " + undo + " >/dev/null; exit $rc";
}

// Every ssh from h1 (the faults' and mpirun's own, which starts each host's
// Open MPI daemon) shares one connection per guest: under TCG a key exchange
// and login cost seconds, and the boot makes more than twenty of them.
const std::string kShareSsh =
    "printf 'Host *\\n  ControlMaster auto\\n  ControlPath /root/.ssh/cm-%%h\\n  "
    "ControlPersist 900\\n' >> /root/.ssh/config && for h in h2 h3 h4; do timeout 60 ssh $h "
    "true & done; wait; ";

std::vector<std::string> ids_at(const nlohmann::json& doc) {
  std::vector<std::string> v;
  for (const auto& f : doc["findings"]) {
    v.push_back(f["id"].get<std::string>() + "@" +
                f.value("host", f.value("subject", std::string())));
  }
  return v;
}

TEST(MeshLab, FourHostsHealthyThenABadHostAPairAndAHostWithoutRxe) {
  const auto r = run_lab(
      {"--hosts", "4", "--mesh", "--timeout", "500",
       // 1: healthy, default mode (ping + bandwidth each way)
       "--run", "h1:" + kShareSsh + "timeout 200 " + kMesh + " --html /run/lab/h1/mesh.html",
       // 2: 20 ms of delay on h3's wire
       "--run",
       with_fault("ssh h3 tc qdisc add dev eth0 root netem delay 20ms",
                  "ssh h3 tc qdisc del dev eth0 root"),
       // 3: RoCE dropped between h2 and h4 only
       "--run",
       with_fault("ssh h2 iptables -I INPUT -s h4 -p udp --dport 4791 -j DROP",
                  "ssh h2 iptables -D INPUT -s h4 -p udp --dport 4791 -j DROP"),
       // 4: no rxe device on h4
       "--run", with_fault("ssh h4 rdma link del rxe0", "true"),
       // the healthy run's page (src/mesh/html_test.cc draws one in Chromium)
       "--run", "h1:cat /run/lab/h1/mesh.html"});

  // 1: a 4x4 matrix of real figures, every pair connected, PASS.
  const auto& healthy = run_output(r, "h1", 0);
  ASSERT_TRUE(healthy.is_object()) << r.console;
  EXPECT_EQ(mesh_violations(healthy), std::vector<std::string>{});
  EXPECT_EQ(healthy["hosts"].size(), 4u);
  EXPECT_EQ(healthy["rounds"].size(), 3u);  // N-1
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      const auto& lat = healthy["matrices"]["latency_us"][a][b];
      const auto& bw = healthy["matrices"]["bandwidth_gbps"][a][b];
      if (a == b) {
        EXPECT_TRUE(lat.is_null());
        continue;
      }
      ASSERT_TRUE(lat.is_number()) << a << "->" << b << " " << healthy["probes"].dump(1);
      EXPECT_GT(lat.get<double>(), 0);
      ASSERT_TRUE(bw.is_number()) << a << "->" << b;
      EXPECT_GT(bw.get<double>(), 0);
    }
  }
  EXPECT_EQ(ids_at(healthy), std::vector<std::string>{"mesh-healthy@"})
      << healthy["findings"].dump(2);
  EXPECT_EQ(run_exit(r, "h1", 0), 0);
  // --html wrote rank 0's page, the same document embedded, with its ticket.
  EXPECT_NE(
      healthy["ticket"]["command_line"].get<std::string>().find("--html /run/lab/h1/mesh.html"),
      std::string::npos)
      << healthy["ticket"].dump();
  const auto& page = run_output(r, "h1", 4);
  ASSERT_TRUE(page.is_string()) << r.console;
  EXPECT_NE(page.get<std::string>().find("<title>rdmacheck mesh, 4 hosts</title>"),
            std::string::npos);
  EXPECT_NE(page.get<std::string>().find("\"command_line\":"), std::string::npos);

  // 2: the delayed host is named, not its pairs.
  const auto& delayed = run_output(r, "h1", 1);
  ASSERT_TRUE(delayed.is_object()) << r.console;
  EXPECT_EQ(ids_at(delayed), std::vector<std::string>{"mesh-bad-host@h3"})
      << delayed["findings"].dump(2);

  // 3: the pair, with the connection layer's diagnosis; the other five pass.
  const auto& fw = run_output(r, "h1", 2);
  ASSERT_TRUE(fw.is_object()) << r.console;
  EXPECT_EQ(ids_at(fw), std::vector<std::string>{"mesh-unreachable-pair@h2-h4"})
      << fw["findings"].dump(2);
  int unreachable = 0;
  for (const auto& p : fw["pairs"]) unreachable += p["unreachable"].get<bool>() ? 1 : 0;
  EXPECT_EQ(unreachable, 1);
  if (!fw["findings"].empty()) {
    EXPECT_NE(fw["findings"][0]["evidence"].dump().find("diagnosis"), std::string::npos)
        << fw["findings"][0].dump(2);
  }
  EXPECT_EQ(run_exit(r, "h1", 2), 2);

  // 4: h4 is named; the other three hosts' pairs were still measured.
  const auto& norxe = run_output(r, "h1", 3);
  ASSERT_TRUE(norxe.is_object()) << r.console;
  EXPECT_EQ(ids_at(norxe), std::vector<std::string>{"mesh-bad-host@h4"})
      << norxe["findings"].dump(2);
  EXPECT_TRUE(norxe["matrices"]["latency_us"][0][1].is_number());
  EXPECT_TRUE(norxe["matrices"]["latency_us"][2][1].is_number());

  // Every run stayed within its rounds' deadline (3 rounds of at most
  // kFaultRound s, and the doctor before them).
  for (size_t n = 1; n < 4; ++n) {
    EXPECT_LT(run_output(r, "h1", n)["elapsed_s"].get<double>(), 3 * kFaultRound + 30) << n;
  }
}

}  // namespace
}  // namespace rdmacheck::labtest
