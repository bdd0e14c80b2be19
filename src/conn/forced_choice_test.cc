// What the user forced (-d, --ib-port, -x, --cm --src) checked against every
// failure that can follow it, on a host with one NIC and on one with two:
// the top finding names the choice, what it selected and the value rdmacheck
// picks by itself; a failure the choice cannot cause keeps its own finding.
// The hosts are captured lab guests (tests/fixtures/README.md): rxe-lab-h1
// (rxe0 on eth0, 198.18.0.1) and rxe-lab-2nic-dup (rxe0 on eth0 198.18.0.1,
// rxe1 on eth1 198.18.1.1 and 198.18.0.11). The observation is filled in by
// observe_choices(), as ping, bw, lat and check fill it in.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cerrno>

#include "conn/diagnose.h"
#include "conn/user_selection.h"

namespace rdmacheck::conn {
namespace {

struct Choice {
  const char* name;
  const char* fixture;
  DeviceChoice dev;
  const char* src;  // --cm --src ("" = not given; no --cm)
  const char* local_address;
  const char* id;       // the top finding when the choice explains the failure
  const char* flag;     // what its summary names
  const char* instead;  // the value rdmacheck picks by itself, in the fix
};

const Choice kChoices[] = {
    {"one NIC, -x 0 (link-local)",
     "rxe-lab-h1",
     {.gid_index = 0},
     "",
     "198.18.0.1",
     "forced-gid-unusable",
     "-x 0 selected rxe0 port 1 GID 0",
     "-x 1"},
    {"one NIC, -x 5 (an empty slot)",
     "rxe-lab-h1",
     {.gid_index = 5},
     "",
     "198.18.0.1",
     "forced-gid-unusable",
     "-x selected something that could not be opened",
     "-x 1"},
    {"one NIC, --ib-port 2 (no such port)",
     "rxe-lab-h1",
     {.ib_port = 2},
     "",
     "198.18.0.1",
     "forced-port-unusable",
     "--ib-port selected something that could not be opened",
     "--ib-port 1"},
    {"one NIC, -d mlx5_0 (no such device)",
     "rxe-lab-h1",
     {.device = "mlx5_0"},
     "",
     "198.18.0.1",
     "forced-device-unusable",
     "-d selected something that could not be opened",
     "-d rxe0"},
    {"two NICs, -d rxe1 (not the route's)",
     "rxe-lab-2nic-dup",
     {.device = "rxe1"},
     "",
     "198.18.0.1",
     "forced-device-unusable",
     "-d rxe1 selected rxe1 port 1",
     "-d rxe0"},
    {"two NICs, -d rxe1 -x 1",
     "rxe-lab-2nic-dup",
     {.device = "rxe1", .gid_index = 1},
     "",
     "198.18.0.1",
     "forced-device-unusable",
     "-d rxe1 selected rxe1 port 1 GID 1",
     "-d rxe0"},
    {"two NICs, --cm --src 198.18.1.1 (the other NIC)",
     "rxe-lab-2nic-dup",
     {},
     "198.18.1.1",
     "198.18.0.1",
     "cm-device-differs",
     "--src 198.18.1.1 makes rdma_cm use rxe1 port 1",
     "--src 198.18.0.1"},
    {"two NICs, --cm --src 198.18.0.11 (the route's subnet, the other NIC)",
     "rxe-lab-2nic-dup",
     {},
     "198.18.0.11",
     "198.18.0.1",
     "cm-device-differs",
     "--src 198.18.0.11 makes rdma_cm use rxe1 port 1",
     "--src 198.18.0.1"},
};

struct Failure {
  const char* name;
  Stage stage;
  int errnum;
  std::optional<int> wc;
  bool server_refused;
  const char* refusal_code;
  const char* error;
  bool rdma;  // a failure a device, port, GID or source address can cause
};

const Failure kFailures[] = {
    {"the server refused the hello's QP", Stage::kHandshake, 0, std::nullopt, true,
     proto::kRefusedQpSetup, "server setup failed: ibv_modify_qp(RTR): Network is unreachable",
     true},
    {"a traffic timeout (no completion)", Stage::kTraffic, ETIMEDOUT, std::nullopt, false, "",
     "no completion within 4000 ms", true},
    {"transport retry counter exceeded", Stage::kTraffic, 0, IBV_WC_RETRY_EXC_ERR, false, "",
     "send completion: transport retry counter exceeded (status 12)", true},
    {"the QP state change was refused", Stage::kQpSetup, EINVAL, std::nullopt, false, "",
     "ibv_modify_qp(RTR): Invalid argument", true},
    {"the local device could not be opened", Stage::kLocalSetup, ENODEV, std::nullopt, false, "",
     "rxe0 port 1 GID index 5 is empty", true},
    {"the rdma_cm connection timed out", Stage::kCmConnect, ETIMEDOUT, std::nullopt, false, "",
     "rdma_connect: no ESTABLISHED event within 4000 ms", true},
    // What the choice cannot cause: the finding stays the failure's own.
    {"TCP connection refused", Stage::kTcpConnect, ECONNREFUSED, std::nullopt, false, "",
     "connect: Connection refused", false},
    {"the name does not resolve", Stage::kResolve, 0, std::nullopt, false, "",
     "getaddrinfo: Name or service not known", false},
    {"the handshake timed out on TCP", Stage::kHandshake, ETIMEDOUT, std::nullopt, false, "",
     "recv: no frame within 10000 ms", false},
    {"the server is busy", Stage::kHandshake, 0, std::nullopt, true, "",
     "busy: 16 sessions run (--max-sessions)", false},
    {"the server has no RDMA device", Stage::kHandshake, 0, std::nullopt, true, "no-rdma-device",
     "this server has no usable RDMA device", false},
};

ConnObservation observe(const Choice& c, const Failure& f) {
  Target t;
  t.fs = FsRoot(std::string(RDMACHECK_FIXTURES) + "/" + c.fixture);
  t.host = "h2";
  t.dev = c.dev;
  t.src = c.src;
  ConnObservation o;
  o.host = t.host;
  o.failed = f.stage;
  o.errnum = f.errnum;
  o.wc_status = f.wc;
  o.server_refused = f.server_refused;
  o.refusal_code = f.refusal_code;
  o.error = f.error;
  if (f.stage == Stage::kCmConnect && f.errnum == ETIMEDOUT) o.cm_break.timeout = true;
  const bool cm = *c.src != '\0';
  observe_choices(o, t, cm, c.local_address);
  // The captures hold sysfs, not /dev nor /sys/module: these guests had
  // rdma_ucm loaded (the lab loads it), as any host where --cm works has.
  o.cm.dev_node = o.cm.ucm_loaded = o.cm.cm_loaded = true;
  return o;
}

TEST(ForcedChoice, EveryFailureIsCheckedAgainstWhatTheUserForced) {
  for (const auto& c : kChoices) {
    for (const auto& f : kFailures) {
      // -x/-d/--ib-port apply to the verbs path, --src to rdma_cm's: each
      // meets the failures of its own path.
      const bool cm = *c.src != '\0';
      if (!cm && f.stage == Stage::kCmConnect) continue;
      if (cm && f.stage == Stage::kQpSetup) continue;
      // A choice that cannot be opened fails the local setup, before any peer.
      const bool opens = std::string(c.flag).find("could not be opened") == std::string::npos;
      if (!opens && f.rdma && f.stage != Stage::kLocalSetup) continue;
      SCOPED_TRACE(std::string(c.name) + " / " + f.name);
      const auto found = diagnose(observe(c, f));
      ASSERT_FALSE(found.empty());
      const Finding& top = found.front();
      if (!f.rdma) {
        EXPECT_NE(name_of(top.id).rfind("forced-", 0), 0u) << top.summary;
        EXPECT_NE(top.id, FindingId::kCmDeviceDiffers) << top.summary;
        continue;
      }
      EXPECT_EQ(name_of(top.id), c.id) << top.summary;
      EXPECT_EQ(top.severity, Severity::kFail);
      EXPECT_NE(top.summary.find(c.flag), std::string::npos) << top.summary;
      EXPECT_NE(top.fix.find(c.instead), std::string::npos) << top.fix;
      // The failure itself stays in the evidence, by stage and message.
      bool names_failure = false;
      for (const auto& e : top.evidence) {
        if (e.find("what failed: " + std::string(name_of(f.stage))) == 0 &&
            e.find(f.error) != std::string::npos)
          names_failure = true;
      }
      EXPECT_TRUE(names_failure) << ::testing::PrintToString(top.evidence);
      EXPECT_EQ(found.size(), 1u) << "the failure's own findings fold under the choice";
    }
  }
}

// A choice that selects what rdmacheck picks anyway explains nothing.
TEST(ForcedChoice, ForcingWhatTheRouteUsesIsNeverBlamed) {
  const Choice same[] = {
      {"one NIC, -x 1", "rxe-lab-h1", {.gid_index = 1}, "", "198.18.0.1", "", "", ""},
      {"one NIC, -d rxe0 --ib-port 1",
       "rxe-lab-h1",
       {.device = "rxe0", .ib_port = 1},
       "",
       "198.18.0.1",
       "",
       "",
       ""},
      {"two NICs, -d rxe0", "rxe-lab-2nic-dup", {.device = "rxe0"}, "", "198.18.0.1", "", "", ""},
      {"two NICs, --cm --src 198.18.0.1",
       "rxe-lab-2nic-dup",
       {},
       "198.18.0.1",
       "198.18.0.1",
       "",
       "",
       ""},
  };
  for (const auto& c : same) {
    for (const auto& f : kFailures) {
      SCOPED_TRACE(std::string(c.name) + " / " + f.name);
      const auto found = diagnose(observe(c, f));
      for (const auto& x : found) {
        EXPECT_NE(name_of(x.id).rfind("forced-", 0), 0u) << x.summary;
        EXPECT_NE(x.id, FindingId::kCmDeviceDiffers) << x.summary;
      }
    }
  }
}

}  // namespace
}  // namespace rdmacheck::conn
