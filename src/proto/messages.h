// The handshake between `rdmacheck ping/bw/check` and `rdmacheck serve`:
// versioned JSON messages in length-prefixed frames (net/tcp.h). Every field
// is validated (type, range, format) by parse_* before any of it is used.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "findings/finding.h"
#include "proto/kinds.h"

namespace rdmacheck::proto {

// 2: the server speaks first (proto/auth.h: greeting, pre-shared key proof).
// 3: sizes carry their unit in the key (facts' active_mtu_bytes, netdev_mtu_bytes,
//    path_mtu_bytes; the hello's path_mtu_bytes), as every printed document does.
constexpr int kVersion = 4;  // 4: TLS 1.3 with key rings ("tls-psk")
constexpr uint16_t kDefaultPort =
    4792;  // next to RoCE's UDP 4791; not perftest's 18515 nor rping's 7174
constexpr uint32_t kMaxMessageSize = 64u << 20;  // largest test message a client may ask for
constexpr uint32_t kMaxDepth = 1024;
// A monitor's probe (TestSpec::probe) is a small ping: at most this many
// bytes a message and kMaxProbeDepth receives, so a server can hold a
// hundred of them beside its tests.
constexpr uint32_t kMaxProbeSize = 4096;
constexpr uint32_t kMaxProbeDepth = 16;
// Where a probe's echo carries the responder's turnaround (nanoseconds from
// the receive completion it read to the reply it posted, little-endian
// uint64), when the welcome says it stamps: after the 4-byte sequence tag,
// so the echo needs at least kTurnaroundEnd bytes.
constexpr uint32_t kTurnaroundOffset = 8;
constexpr uint32_t kTurnaroundEnd = kTurnaroundOffset + 8;

// What each side tells the other about itself, so that either can compare.
struct HostFacts {
  std::string hostname;
  std::string version;  // rdmacheck version
  std::string device;   // "rxe0"
  int port = 1;
  int gid_index = 0;
  std::string gid;       // "0000:0000:0000:0000:0000:ffff:c612:0001"
  std::string gid_type;  // "RoCE v2"
  int active_mtu = 0;    // bytes
  int netdev_mtu = 0;    // bytes, 0 when unknown
  double rate_gbps = 0;
  std::string netdev;
  // The priority of the test's packets: the QP's address vector as the device
  // reports it after RTR (what was asked for before that).
  int traffic_class = 0;
  int sl = 0;
  int path_mtu = 0;    // bytes: the QP's as the device reports it after RTR (-m), 0 before or UD
  std::string choice;  // what was chosen and why ("route to A from B via eth1 -> rxe1 port 1, ...")
  // The addresses the choice followed: this side's (the route's source, or on
  // the server the address the client connected to) and the other side's;
  // the -d/--ib-port/-x flags that forced it ("" = chosen by the route).
  std::string local_address;
  std::string peer_address;
  std::string forced;
};

struct QpInfo {
  uint32_t qpn = 0;  // 24 bits
  uint32_t psn = 0;  // 24 bits
  std::string gid;
  uint16_t lid = 0;
  uint64_t addr = 0;  // buffer for RDMA write/read tests, 0 when none
  uint32_t rkey = 0;
  uint32_t qkey = 0;      // UD only
  uint32_t rd_atom = 16;  // RC: RDMA reads/atomics this QP accepts at once as responder
};

// What the server must know of a bw/lat test to play its part: the sizes in
// the order the client runs them, and how many exchanges per size (lat).
struct PerfParams {
  std::vector<uint32_t> sizes;  // 1..kMaxSizes entries, each 1..max_size
  uint64_t iterations = 0;      // per size; 0 = bounded by duration_ms
  uint32_t duration_ms = 0;     // per size; 0 = bounded by iterations
  bool bidir = false;           // bw -b: the server runs the same test towards the client
  bool validate = false;        // --validate: both sides check the data that landed
  uint32_t seed = 0;            // --validate: seeds each side's data pattern
  // The posting knobs, so a bidirectional server drives its direction as the client does.
  uint32_t tx_depth = 128;
  uint32_t post_list = 1;
  uint32_t cq_mod = 1;
  uint32_t inline_size = 0;
};
constexpr size_t kMaxSizes = 64;

struct TestSpec {
  TestKind kind = TestKind::kPing;
  Transport transport = Transport::kRc;
  Op op = Op::kSend;          // where it may run: proto/kinds.h's table
  uint32_t max_size = 0;      // bytes
  uint32_t depth = 1;         // receive buffers to keep posted
  bool cm = false;            // connect through librdmacm instead of the TCP exchange
  uint8_t traffic_class = 0;  // -T: both QPs' GRH traffic class
  uint8_t sl = 0;             // -S: both QPs' service level
  uint16_t path_mtu = 0;      // -m: both QPs' path MTU cap in bytes (0: the ports' active MTU)
  uint8_t ack_timeout = 0;    // -u: both QPs' ACK timeout exponent (0: from the round trip)
  uint32_t budget_ms = 0;     // how long the client gives the test from its hello (0: unsaid)
  // `rdmacheck monitor`'s probe (a ping of at most kMaxProbeSize): the
  // server runs it in slots of its own, apart from tests, and stamps its
  // turnaround into each echo. Sent only when true, so older servers read it.
  bool probe = false;
  std::optional<PerfParams> perf;  // present exactly when kind is bw or lat
};

struct Step {        // one QP state change and how long it took
  std::string name;  // "INIT", "RTR", "RTS", "ERROR"
  double usec = 0;
  bool ok = true;
  std::string error;
};

struct Hello {
  int version = kVersion;
  TestSpec test;
  HostFacts facts;
  QpInfo qp;
};

struct Welcome {
  HostFacts facts;
  QpInfo qp;              // absent with --cm: the connection manager carries it
  uint64_t cm_token = 0;  // with --cm: put it in the connect request's private data
  std::vector<Step> timeline;
  // The hello's probe was taken as one: each echo carries the server's
  // turnaround at kTurnaroundOffset. False from a server that predates probes.
  bool probe = false;
};

struct Done {
  std::vector<Step> timeline;
  uint64_t sent = 0;
  uint64_t received = 0;
};

// What the server measured of its own direction in a bidirectional bw test.
struct DirSample {
  uint32_t size = 0;
  uint64_t msgs = 0;
  double seconds = 0;
};

struct Bye {
  std::vector<Step> timeline;
  uint64_t received = 0;
  uint64_t replied = 0;
  std::vector<std::string> wc_errors;  // completion errors the server saw ("retry exceeded ...")
  std::string firewall;  // the server's own view of UDP 4791 filtering: "", or the rule text
  // --cm: why the server rejected the connect request that carried this
  // session's token ("": it did not), e.g. it came from another address.
  std::string cm_refused;
  // bw/lat: the server port's counter deltas over the session ("hw_counters/out_of_seq_request").
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::vector<DirSample> bw;  // bidirectional bw: the server's direction, per size
  // bw/lat: CPU time the server's session thread used while it played its part, and how long.
  double cpu_s = 0;
  double wall_s = 0;
};
constexpr size_t kMaxCounters = 256;

// A barrier between the two sides of a bw/lat test, over the control
// connection. "go": both sides start size STEP together (bidirectional).
// "check": the client finished size STEP (OPS work requests completed on this
// QP); the server answers once its own run of that size is over too, with
// what it found wrong in the data that landed on its side (--validate).
enum class SyncPhase { kGo, kCheck };
struct Sync {
  uint32_t step = 0;
  SyncPhase phase = SyncPhase::kGo;
  uint64_t ops = 0;
  std::vector<std::string> errors;
};

// --cm perf tests: after ESTABLISHED the server sends where its buffer is,
// which the connection manager's handshake does not carry.
struct Ready {
  QpInfo qp;
};

nlohmann::json to_json(const Hello& m);
nlohmann::json to_json(const Welcome& m);
nlohmann::json to_json(const Done& m);
nlohmann::json to_json(const Bye& m);
nlohmann::json to_json(const Sync& m);
nlohmann::json to_json(const Ready& m);
nlohmann::json error_message(const std::string& text);
// The code of a refusal that the hello's queue pair caused (the server could
// not set up a QP towards its GID, or the GID is not the client's address):
// the refusals a client's -d/--ib-port/-x can explain. Other refusals (busy,
// budget, size, rate) carry no code or doctor's finding id.
inline constexpr const char* kRefusedQpSetup = "qp-setup";

Result<Hello> parse_hello(const nlohmann::json& j);
// Whether FRAME is a hello that asks to be run as a monitor's probe (before
// parse_hello checks it: the server picks the probe's slot pool by it).
bool asks_probe(const nlohmann::json& frame);
Result<Welcome> parse_welcome(const nlohmann::json& j);
Result<Done> parse_done(const nlohmann::json& j);
Result<Bye> parse_bye(const nlohmann::json& j);
Result<Sync> parse_sync(const nlohmann::json& j);
Result<Ready> parse_ready(const nlohmann::json& j);

// Every type of message on the wire, one row each (EnumNames below): what a
// message's "type" says. Writers name it with type_name(), readers compare
// type_of(); no module compares the text.
enum class MessageType {
  kGreeting,
  kAuth,
  kAuthOk,
  kError,
  kHello,
  kWelcome,
  kDone,
  kBye,
  kSync,
  kReady,
  kDoctorRequest,
  kDoctorReport,
  kTcpEcho,
  kTcpStream,
  kTcpStreamReady,
  kTcpStreamResult,
};

// The message's type, or nullopt when it has none or one this version does
// not know.
std::optional<MessageType> type_of(const nlohmann::json& j);
std::string type_name(MessageType t);
// "type" of a message as sent (for messages about an unexpected one), "" when absent.
std::string message_type(const nlohmann::json& j);
// An "error" message's text.
std::string error_text(const nlohmann::json& j);

// GID text as sysfs prints it: 8 groups of 4 hex digits.
bool valid_gid_text(const std::string& gid);
nlohmann::json to_json(const HostFacts& f);
nlohmann::json to_json(const std::vector<Step>& steps);

}  // namespace rdmacheck::proto

namespace rdmacheck {
template <>
struct EnumNames<proto::MessageType> {
  using M = proto::MessageType;
  static constexpr std::array<std::pair<M, std::string_view>, 16> table = {{
      {M::kGreeting, "greeting"},
      {M::kAuth, "auth"},
      {M::kAuthOk, "auth-ok"},
      {M::kError, "error"},
      {M::kHello, "hello"},
      {M::kWelcome, "welcome"},
      {M::kDone, "done"},
      {M::kBye, "bye"},
      {M::kSync, "sync"},
      {M::kReady, "ready"},
      {M::kDoctorRequest, "doctor-request"},
      {M::kDoctorReport, "doctor-report"},
      {M::kTcpEcho, "tcp-echo"},
      {M::kTcpStream, "tcp-stream"},
      {M::kTcpStreamReady, "tcp-stream-ready"},
      {M::kTcpStreamResult, "tcp-stream-result"},
  }};
};
template <>
struct EnumNames<proto::SyncPhase> {
  static constexpr std::array<std::pair<proto::SyncPhase, std::string_view>, 2> table = {{
      {proto::SyncPhase::kGo, "go"},
      {proto::SyncPhase::kCheck, "check"},
  }};
};
}  // namespace rdmacheck

namespace rdmacheck::proto {

// `check` asks the server for its own doctor findings: {"type":"doctor-request"}
// answered by {"type":"doctor-report","hostname":..,"findings":[..]}.
nlohmann::json doctor_request();
nlohmann::json doctor_report(const std::string& hostname, const nlohmann::json& findings);
struct DoctorReport {
  std::string hostname;
  std::vector<Finding> findings;
};
// Validates every finding: kebab-case id, known severity and layer, bounded texts.
Result<DoctorReport> parse_doctor_report(const nlohmann::json& j);

}  // namespace rdmacheck::proto
