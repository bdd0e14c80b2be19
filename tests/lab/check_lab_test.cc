// `rdmacheck check` scenarios: the fault suite of the field guide, each
// asserted on the finding ids of the JSON report, on the real stack, and
// each report held to the checked-in schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "lab/lab_harness.h"
#include "testing/check_page.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"
#include "testing/temp_dir.h"

namespace rdmacheck::labtest {
namespace {

std::string status(const nlohmann::json& check, size_t layer) {
  return check["layers"][layer]["status"].get<std::string>();
}

std::vector<std::string> layer_ids(const nlohmann::json& check, size_t layer) {
  return finding_ids(check["layers"][layer]["findings"]);
}

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// What the guest printed, held to schemas/check.schema.json: empty when it conforms.
std::vector<std::string> check_violations(const nlohmann::json& check) {
  static const auto schema = load_schema(RDMACHECK_SCHEMAS, "check.schema.json");
  if (!schema) return {schema.error().message()};
  return perf::schema_violations(*schema, check);
}

TEST(CheckLab, TheDefaultLabIsAHealthyCheck) {
  const auto r = run_lab({});  // no --run: h1 serves, h2 runs `rdmacheck check h1 --json`
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  EXPECT_EQ(c["command"], "check");
  EXPECT_EQ(c["host"], "h1");
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_TRUE(status(c, l) == "pass" || status(c, l) == "warn") << c["layers"][l].dump(2);
  }
  // What the diagnosis matrix holds its healthy row to (bench/diagnosis/
  // scenarios.tsv; diagnosis.quick leaves that row to this test): no finding
  // to fix, exit 0.
  EXPECT_EQ(c["top_findings"], nlohmann::json::array()) << c["top_findings"].dump(2);
  EXPECT_EQ(c["exit_status"], 0) << c["layers"].dump(2);
  EXPECT_EQ(r.exit, 0) << r.console;
  // Layer 3's TCP reference ran between the same guests: every byte the
  // client streamed was counted by h1's server, with both sides' CPU, and the
  // RDMA bandwidth test measured its CPU too.
  const auto& tcp = c["tcp_baseline"];
  ASSERT_TRUE(tcp.is_object()) << c.dump(2).substr(0, 2000);
  EXPECT_EQ(tcp["ok"], true) << tcp.dump(2);
  EXPECT_GT(tcp["bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(tcp["server_cpu_percent"].get<double>(), 0);
  EXPECT_EQ(tcp["echoes"], 200);
  ASSERT_FALSE(c["perf"].empty());
  EXPECT_TRUE(c["perf"][0]["cpu"].is_object()) << c["perf"][0].dump(2).substr(0, 2000);
  // No -T/-S and virtio has no DCB: the check says it kept class 0, and why,
  // and the QPs carried exactly that.
  EXPECT_EQ(c["priority"]["source"], "default") << c["priority"].dump();
  EXPECT_EQ(c["priority"]["why"], "PFC on eth0 is not readable: class 0, level 0");
  EXPECT_EQ(c["local"]["traffic_class"], 0);
  // The ticket names the device the check used.
  EXPECT_EQ(c["ticket"]["devices"][0]["name"], "rxe0") << c["ticket"].dump();
}

// A host problem on the client only: a low memlock limit (root ignores it
// unless CAP_IPC_LOCK is dropped). The finding carries h2, the host it is on.
void expect_host_problem_for_h2(const nlohmann::json& c) {
  ASSERT_TRUE(c.is_object());
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  bool found = false;
  for (size_t l = 0; l < 3; ++l) {
    for (const auto& f : c["layers"][l]["findings"]) {
      if (f["id"] == "memlock-too-low") {
        found = true;
        EXPECT_EQ(f["host"], "h2") << f.dump(2);
      }
    }
  }
  EXPECT_TRUE(found) << c.dump(2);
}

// One boot: the healthy check with its page, then (run 2) the same pair
// checked by a client whose memlock limit is too low.
TEST(CheckLab, HealthyPairPassesEveryLayerAndRendersHtml) {
  const auto r = run_lab({"--run", "h2:rdmacheck check h1 --json --html /run/lab/h2/report.html",
                          "--run", "h2:cat /run/lab/h2/report.html", "--run",
                          "h2:capsh --drop=cap_ipc_lock -- -c 'ulimit -l 64; rdmacheck check h1 "
                          "--quick --json'"});
  {
    SCOPED_TRACE("memlock too low on h2");
    expect_host_problem_for_h2(run_output(r, "h2", 2));
  }
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  for (size_t l = 0; l < 3; ++l) {
    EXPECT_TRUE(status(c, l) == "pass" || status(c, l) == "warn") << c["layers"][l].dump(2);
    for (const auto& f : c["layers"][l]["findings"]) EXPECT_NE(f["severity"], "fail") << f.dump(2);
  }
  EXPECT_LE(run_exit(r, "h2", 0), 1) << r.console;
  EXPECT_EQ(c["pings"][0]["ok"], true);
  EXPECT_FALSE(c["perf"].empty());
  EXPECT_TRUE(c["peer_doctor"].is_array()) << "the server's own doctor findings came back";

  // The latency tests keep their distribution for the page; the bandwidth
  // tests (every millisecond's progress recorded) their ten intervals.
  for (const auto& p : c["perf"]) {
    // A failed test has no results: say so (operator[] on a const document's
    // missing key is undefined: it crashed the test binary once, ci42).
    if (!p.contains("results") || !p["results"].is_array() || p["results"].empty()) {
      ADD_FAILURE() << "a perf test without results: " << p.dump(2).substr(0, 2000);
      continue;
    }
    if (p["command"] == "lat") {
      EXPECT_FALSE(p["results"][0]["histogram"].empty()) << p.dump();
    }
    if (p["command"] == "bw") {
      const auto& i = p["results"][0]["intervals"];
      ASSERT_TRUE(i.is_object()) << p["results"].dump(2);
      // Ten, unless the guest's thread stalled longer than a part (150 ms).
      EXPECT_GE(i["count"].get<int>(), 5) << i.dump();
      EXPECT_LE(i["count"].get<int>(), 10) << i.dump();
      EXPECT_EQ(i["gbps"].size(), i["count"].get<size_t>()) << i.dump();
      EXPECT_LE(i["min_gbps"].get<double>(), i["median_gbps"].get<double>()) << i.dump();
      EXPECT_LE(i["median_gbps"].get<double>(), i["p99_gbps"].get<double>()) << i.dump();
      // The counted 1.5 s (2 s less the warm-up), cut evenly.
      EXPECT_NEAR(i["seconds"].get<double>(), p["results"][0]["seconds"].get<double>() / 10, 1e-6)
          << i.dump();
    }
  }

  // The page opens offline in headless Chromium and shows what the document
  // holds: no console message, the ticket, a row per number, both doctors,
  // and charts whose series have their own colours in the screenshot.
  const std::string html = run_output(r, "h2", 1).get<std::string>();
  ASSERT_NE(html.find("new Chart("), std::string::npos) << html.substr(0, 500);
  const auto dir = test_util::make_temp_dir("html");
  std::ofstream(dir / "report.html") << html;
  const auto page = test_util::open_in_chromium(dir / "report.html");
  ASSERT_TRUE(page) << page.error().message();
  // Against the document the page embeds: its ticket was made for the file,
  // a moment after the one printed on stdout (the timestamps can differ).
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t from = html.find(open) + open.size();
  std::string text = html.substr(from, html.find("</script>", from) - from);
  for (size_t at = 0; (at = text.find("<\\/", at)) != std::string::npos;) text.erase(at + 1, 1);
  const auto embedded = nlohmann::json::parse(text);
  EXPECT_EQ(embedded["perf"], c["perf"]);
  EXPECT_EQ(test_util::check_page_problems(embedded, *page), std::vector<std::string>{});
  EXPECT_NE(page->dom.find("<code>rdmacheck check h1 --json --html"), std::string::npos);
}

TEST(CheckLab, MtuMismatchIsReportedAndTheTestStillCorrect) {
  const auto r =
      run_lab({"--fault", "mtu-mismatch", "--run", "h2:rdmacheck check h1 --quick --json"});
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  EXPECT_TRUE(has(layer_ids(c, 0), "mtu-mismatch")) << c["layers"][0].dump(2);
  EXPECT_EQ(status(c, 1), "pass") << c["layers"][1].dump(2);  // both sides use the smaller MTU
  EXPECT_EQ(status(c, 2), "not_run");
  EXPECT_EQ(r.exit, 1);
}

// Two faults at once, on two hosts, as they arrive in practice: 1 % loss on
// the client (netem on h2's eth0) and the server (h1) left in powersave.
// Each is named, for its own host: the loss at the performance layer from
// the test's counters, the governor from the server's own doctor (through
// the handshake), for h1 and only h1 (the client's host is in performance).
TEST(CheckLab, LossOnTheClientAndPowersaveOnTheServerAreTwoFindingsForTheirHosts) {
  const auto r = run_lab(
      {"--fault", "loss:1@h2", "--fault", "powersave", "--run", "h2:rdmacheck check h1 --json"});
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  EXPECT_TRUE(has(layer_ids(c, 2), "packet-loss-during-test")) << c["layers"][2].dump(2);
  EXPECT_EQ(status(c, 2), "warn");
  std::vector<std::string> hosts;
  for (const auto& layer : c["layers"]) {
    for (const auto& f : layer["findings"]) {
      if (f["id"] == "cpu-governor-powersave") hosts.push_back(f["host"].get<std::string>());
    }
  }
  EXPECT_EQ(hosts, std::vector<std::string>{"h1"}) << c.dump(2);
  EXPECT_NE(r.console.find("h1| + mount -t tmpfs powersave"), std::string::npos) << r.console;
  EXPECT_NE(r.console.find("h2| + tc qdisc add dev eth0 root netem loss 1%"), std::string::npos);
}

// No server on h1: check names it in its connection layer and runs nothing
// after it; ping names it alone.
TEST(CheckLab, NoServerIsNamedByCheckAndByPing) {
  const auto r = run_lab({"--fault", "no-server", "--run", "h2:rdmacheck check h1 --json", "--run",
                          "h2:rdmacheck ping h1 --json"});
  EXPECT_EQ(r.exit, 2) << r.console;
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(run_exit(r, "h2", 0), 2);
  EXPECT_EQ(check_violations(c), std::vector<std::string>{});
  EXPECT_EQ(layer_ids(c, 1).at(0), "server-not-listening");
  EXPECT_EQ(status(c, 2), "not_run");
  EXPECT_EQ(run_exit(r, "h2", 1), 2);
  EXPECT_EQ(finding_ids(run_output(r, "h2", 1)["findings"]),
            std::vector<std::string>{"server-not-listening"});
}

}  // namespace
}  // namespace rdmacheck::labtest
