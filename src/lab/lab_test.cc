// lab --json is a document like every command's: the schema_version, the
// ticket header and exit_status around the guests' runs, held to
// schemas/lab.schema.json without booting a guest (the lab tests hold what a
// real lab printed to the same schema).
#include "lab/lab.h"

#include <gtest/gtest.h>

#include "base/version.h"
#include "lab/wire.h"
#include "testing/schema_check.h"
#include "testing/schema_refs.h"

namespace rdmacheck::lab {
namespace {

using nlohmann::json;

const TicketHeader kTicket{.version = "0.1.0",
                           .kernel = "6.1.0-28-amd64",
                           .rdma_core = "44.0",
                           .timestamp = "2026-12-02T01:00:00Z",
                           .command_line = "rdmacheck lab --json"};

json one_host() {
  return json::array(
      {{{"name", "h2"},
        {"address", "198.18.0.2"},
        {"nics", json::array({{{"wire", 1},
                               {"netdev", "eth0"},
                               {"device", "rxe0"},
                               {"address", "198.18.0.2"},
                               {"name", "h2-1"}}})},
        {"boot_s", 7.5},
        {"setup", json::array()},
        {"serve", false},
        {"failed", ""},
        {"runs",
         json::array({{{"command", "rdmacheck ping h1 --json"},
                       {"exit_status", 2},
                       {"output", {{"exit_status", 2}}}},
                      {{"command", "sleep 1000"}, {"exit_status", nullptr}, {"output", ""}}})}}});
}

// What the lab prints for a port without and one with switch faults.
json wire() {
  WireCounters plain{"h2", 1, "eth0", 10, 0, 0, 3, std::nullopt};
  WireCounters faulty{"h1", 1, "eth0", 12, 0, 0, 2, GuestWire{12, 9, 0}};
  faulty.switch_faults = {"switch-loss:5@h1:in"};
  faulty.switch_in.frames = 10;
  faulty.switch_in.lost = 1;
  return json::array({to_json(plain), to_json(faulty)});
}

json lab_schema() {
  auto s = load_schema(RDMACHECK_SCHEMAS, "lab.schema.json");
  EXPECT_TRUE(s) << s.error().message();
  return s ? *s : json::object();
}

TEST(LabDocument, CarriesWhatEveryCommandsDocumentDoesAndFitsItsSchema) {
  const json doc = result_document(2, "", one_host(), wire(), kTicket);
  EXPECT_EQ(doc["schema_version"], kSchemaVersion);
  EXPECT_EQ(doc["ticket"]["command_line"], "rdmacheck lab --json");
  EXPECT_EQ(doc["exit_status"], 2);
  EXPECT_FALSE(doc.contains("exit"));
  EXPECT_EQ(perf::schema_violations(lab_schema(), doc), std::vector<std::string>{});
  // The lab's own failure is 3, with its reason.
  const json failed =
      result_document(kLabFailed, "h1 did not boot", one_host(), json::array(), kTicket);
  EXPECT_EQ(perf::schema_violations(lab_schema(), failed), std::vector<std::string>{});
}

TEST(LabDocument, SchemaRefusesWhatTheLabNeverPrints) {
  json doc = result_document(0, "", one_host(), wire(), kTicket);
  doc["exit_status"] = 4;
  doc["hosts"][0]["runs"][0]["exit"] = 0;
  doc.erase("ticket");
  EXPECT_EQ(perf::schema_violations(lab_schema(), doc),
            (std::vector<std::string>{R"($: required 'ticket' is missing)",
                                      R"($.exit_status: 4 is not one of [0,1,2,3])",
                                      R"($.hosts[0].runs[0].exit: not allowed here)"}));
}

}  // namespace
}  // namespace rdmacheck::lab
