// Faults in the switch between the hosts (lab --fault switch-...), where
// neither host's qdisc, firewall or link state can see them: the diagnosis
// must come from end-to-end evidence, and the lab's wire report is the
// truth it is held to.
#include <gtest/gtest.h>

#include <algorithm>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

const nlohmann::json* wire_of(const LabRun& r, const std::string& host) {
  for (const auto& w : r.doc["wire"]) {
    if (w["host"] == host) return &w;
  }
  return nullptr;
}

TEST(FabricLab, LossInTheSwitchIsNamedFromTheEndsAndNeitherHostSawIt) {
  const auto r = run_lab(
      {"--fault", "switch-loss:2@h1", "--seed", "7", "--run", "h2:rdmacheck check h1 --json"});
  const auto& c = run_output(r, "h2");
  ASSERT_TRUE(c.is_object()) << r.console;
  EXPECT_EQ(printed_violations(r.doc, "lab.schema.json"), std::vector<std::string>{});
  // The truth: the switch dropped frames both ways on h1's port; neither
  // host's own queue dropped anything.
  const auto* h1 = wire_of(r, "h1");
  const auto* h2 = wire_of(r, "h2");
  ASSERT_TRUE(h1 && h2) << r.doc["wire"].dump(2);
  ASSERT_TRUE((*h1)["switch"].is_object()) << h1->dump(2);
  EXPECT_EQ((*h1)["switch"]["faults"], nlohmann::json::array({"switch-loss:2@h1"}));
  EXPECT_GT((*h1)["switch"]["in"]["lost"].get<int>(), 0);
  EXPECT_GT((*h1)["switch"]["out"]["lost"].get<int>(), 0);
  EXPECT_TRUE((*h2)["switch"].is_null());
  for (const auto* w : {h1, h2}) {
    ASSERT_TRUE((*w)["guest"].is_object()) << w->dump(2);
    EXPECT_EQ((*w)["guest"]["qdisc_dropped"], 0) << w->dump(2);
  }
  EXPECT_NE(r.console.find("lab: switch port h1 (switch-loss:2@h1): towards h1 "),
            std::string::npos);
  // What the ends say: loss, as a warning (traffic passes: no layer FAILs).
  std::vector<std::string> ids;
  for (const auto& l : c["layers"]) {
    EXPECT_NE(l["status"], "fail") << l.dump(2);
    for (const auto& id : finding_ids(l["findings"])) ids.push_back(id);
  }
  const bool named = std::find(ids.begin(), ids.end(), "roce-loss") != ids.end() ||
                     std::find(ids.begin(), ids.end(), "packet-loss-during-test") != ids.end();
  EXPECT_TRUE(named) << c["layers"].dump(2);
  EXPECT_EQ(c["exit_status"], 1);
  // The loss hits TCP as well: the report must not put it on RoCE alone
  // from a handful of clean TCP echoes.
  for (const auto& l : c["layers"]) {
    for (const auto& f : l["findings"]) {
      for (const auto& e : f["evidence"]) {
        if (!c["tcp_probe"]["lossy"].get<bool>()) {
          EXPECT_EQ(e.get<std::string>().find("what is lost is RoCE"), std::string::npos)
              << f.dump(2) << "\ntcp probe: " << c["tcp_probe"].dump();
        }
      }
    }
  }
}

// A link flap one hop away, in the middle of a bandwidth test: h1's switch
// port passes nothing for 4 s from 8 s into the run (the 20 s test is well
// under way by then; RC's retries, 7 x 1.07 s on rxe, should outlast the
// flap). The test ends in bounded time and names the stall with when it
// was; the wire report counts one flap.
//
// rxe does not always recover: where the hub's queue towards h1 held
// requests when the port went down, h1 executed them and its ACKs were lost
// (about 300 frames from h1 dropped while down, against under 10 when it
// recovers), and then its retransmissions after the flap, though they
// reached h1 (it counts them in duplicate_request), never completed: the retries ran
// out. 2 of 5 runs on 2026-12-03 did not recover while the emulation ran
// slowly, 0 of 12 after (docs/diagnosis.md, "Loss in the fabric"). Both ends are asserted: a stall
// that resumed (WARN, exit 1), or a failed test whose first finding is the stall before it (exit
// 2).
TEST(FabricLab, AFlapMidTestEndsInBoundedTimeAndIsNamedAsAStall) {
  const auto r = run_lab({"--fault-at", "8:switch-flap:4/1000@h1", "--run",
                          "h2:rdmacheck bw h1 -D 20 -s 4096 --json"});
  const auto& d = run_output(r, "h2");
  ASSERT_TRUE(d.is_object()) << r.console;
  EXPECT_EQ(printed_violations(d, "perf.schema.json"), std::vector<std::string>{});
  const auto* h1 = wire_of(r, "h1");
  ASSERT_TRUE(h1 && (*h1)["switch"].is_object()) << r.doc["wire"].dump(2);
  EXPECT_EQ((*h1)["switch"]["faults"],
            nlohmann::json::array({"--fault-at 8:switch-flap:4/1000@h1"}));
  EXPECT_EQ((*h1)["switch"]["in"]["flaps"], 1);
  EXPECT_GT((*h1)["switch"]["in"]["flap_dropped"].get<int>(), 0);
  EXPECT_NE(r.console.find("lab: the run began"), std::string::npos);
  // Bounded: the 20 s test plus RC's retries, never the lab's deadline.
  EXPECT_LT(d["elapsed_ms"].get<double>(), 40000) << d.dump(2);
  ASSERT_TRUE(d["findings"].is_array() && !d["findings"].empty()) << d.dump(2);
  for (const auto& f : d["findings"]) EXPECT_NE(f["id"], "firewall-blocks-roce") << f.dump(2);
  const auto& first = d["findings"][0];
  EXPECT_EQ(first["id"], "traffic-stalled") << d["findings"].dump(2);
  EXPECT_EQ(first["severity"], "warn");
  const auto summary = first["summary"].get<std::string>();
  if (d["ok"] == true) {
    EXPECT_EQ(run_exit(r, "h2"), 1);
    EXPECT_NE(summary.find("traffic stopped for "), std::string::npos) << summary;
    EXPECT_NE(summary.find("and then resumed"), std::string::npos) << summary;
  } else {
    EXPECT_EQ(run_exit(r, "h2"), 2);
    EXPECT_EQ(d["failed_stage"], "traffic") << d.dump(2);
    EXPECT_NE(summary.find("did not resume: the test failed"), std::string::npos) << summary;
    // The error is the evidence, and the flap dropped the ACKs from h1 too.
    EXPECT_EQ(first["evidence"].back(), d["error"]) << first.dump(2);
    EXPECT_GT((*h1)["switch"]["out"]["flap_dropped"].get<int>(), 0);
  }
}

}  // namespace
}  // namespace rdmacheck::labtest
