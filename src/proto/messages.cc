#include "proto/messages.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "proto/fields.h"

namespace rdmacheck::proto {
namespace {

using detail::Fields;
using detail::kMaxErrors;
using detail::kMaxSteps;
using detail::kMaxString;
using nlohmann::json;

std::optional<Error> check_type(const json& j, MessageType type) {
  const auto t = type_of(j);
  if (t == type) return std::nullopt;
  if (t == MessageType::kError) return plain_error("peer", error_text(j));
  return plain_error("handshake", fmt::format("expected a '{}' message, got '{}'", name_of(type),
                                              message_type(j)));
}

HostFacts read_facts(Fields& parent, const json* j) {
  HostFacts f;
  if (j == nullptr) return f;
  Fields r(*j, "facts");
  f.hostname = r.text("hostname");
  f.version = r.text("version");
  f.device = r.text("device");
  f.port = r.integer<int>("port", 1, 255);
  f.gid_index = r.integer<int>("gid_index", 0, 65535);
  f.gid = r.gid("gid");
  f.gid_type = r.text("gid_type");
  f.active_mtu = r.integer<int>("active_mtu_bytes", 0, 4096);
  f.netdev_mtu = r.integer<int>("netdev_mtu_bytes", 0, 65536);
  f.rate_gbps = r.number("rate_gbps", 0, 1e5);
  f.netdev = r.text("netdev");
  // Added after protocol version 1 shipped: absent means 0.
  if (j->contains("traffic_class")) f.traffic_class = r.integer<int>("traffic_class", 0, 255);
  if (j->contains("sl")) f.sl = r.integer<int>("sl", 0, 15);
  if (j->contains("path_mtu_bytes")) f.path_mtu = r.integer<int>("path_mtu_bytes", 0, 4096);
  if (j->contains("choice")) f.choice = r.text("choice");
  if (j->contains("local_address")) f.local_address = r.text("local_address");
  if (j->contains("peer_address")) f.peer_address = r.text("peer_address");
  if (j->contains("forced")) f.forced = r.text("forced");
  parent.merge(r.error());
  return f;
}

QpInfo read_qp(Fields& parent, const json* j) {
  QpInfo q;
  if (j == nullptr) return q;
  Fields r(*j, "qp");
  q.qpn = r.integer<uint32_t>("qpn", 1, 0xffffff);
  q.psn = r.integer<uint32_t>("psn", 0, 0xffffff);
  q.gid = r.gid("gid");
  q.lid = r.integer<uint16_t>("lid", 0, 0xffff);
  q.addr = r.integer<uint64_t>("addr", 0, UINT64_MAX);
  q.rkey = r.integer<uint32_t>("rkey", 0, UINT32_MAX);
  q.qkey = r.integer<uint32_t>("qkey", 0, UINT32_MAX);
  q.rd_atom = r.integer<uint32_t>("rd_atom", 0, 255);
  parent.merge(r.error());
  return q;
}

std::vector<Step> read_steps(Fields& parent, const json* j) {
  std::vector<Step> steps;
  if (j == nullptr) return steps;
  for (const auto& e : *j) {
    Fields r(e, "timeline[]");
    Step s;
    s.name = r.text_in("name", {"RESET", "INIT", "RTR", "RTS", "ERROR", "ADDR_RESOLVED",
                                "ROUTE_RESOLVED", "CONNECT_REQUEST", "ESTABLISHED"});
    s.usec = r.number("usec", 0, 1e12);
    const auto ok = e.find("ok");
    s.ok = ok != e.end() && ok->is_boolean() && ok->get<bool>();
    s.error = r.text("error", false);
    parent.merge(r.error());
    steps.push_back(std::move(s));
  }
  return steps;
}

PerfParams read_perf(Fields& parent, const json* j, uint32_t max_size) {
  PerfParams p;
  if (j == nullptr) return p;
  Fields r(*j, "test.perf");
  if (const json* a = r.array("sizes", kMaxSizes)) {
    for (const auto& e : *a) {
      const bool integral =
          e.is_number_unsigned() || (e.is_number_integer() && e.get<int64_t>() > 0);
      if (!integral || e.get<uint64_t>() < 1 || e.get<uint64_t>() > max_size) {
        parent.merge(plain_error("handshake", fmt::format("hello.test.perf.sizes: each must be an "
                                                          "integer in 1..max_size ({})",
                                                          max_size)));
        return p;
      }
      p.sizes.push_back(static_cast<uint32_t>(e.get<uint64_t>()));
    }
    if (p.sizes.empty()) parent.merge(plain_error("handshake", "hello.test.perf.sizes: empty"));
  }
  p.iterations = r.integer<uint64_t>("iterations", 0, 1ull << 40);
  p.duration_ms = r.integer<uint32_t>("duration_ms", 0, uint64_t{3600} * 1000);
  p.bidir = r.flag("bidir");
  p.validate = r.flag("validate");
  p.seed = r.integer<uint32_t>("seed", 0, UINT32_MAX);
  p.tx_depth = r.integer<uint32_t>("tx_depth", 1, kMaxDepth);
  p.post_list = r.integer<uint32_t>("post_list", 1, kMaxDepth);
  p.cq_mod = r.integer<uint32_t>("cq_mod", 1, kMaxDepth);
  p.inline_size = r.integer<uint32_t>("inline_size", 0, 1024);
  if (!r.error() && (p.iterations == 0) == (p.duration_ms == 0)) {
    parent.merge(plain_error("handshake",
                             "hello.test.perf: give exactly one of iterations and "
                             "duration_ms"));
  }
  parent.merge(r.error());
  return p;
}

}  // namespace

bool valid_gid_text(const std::string& gid) {
  if (gid.size() != 39) return false;
  for (size_t i = 0; i < gid.size(); ++i) {
    if (i % 5 == 4) {
      if (gid[i] != ':') return false;
    } else if (std::isxdigit(static_cast<unsigned char>(gid[i])) == 0) {
      return false;
    }
  }
  return true;
}

std::optional<MessageType> type_of(const json& j) {
  auto it = j.find("type");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return parse_enum<MessageType>(it->get_ref<const std::string&>());
}

std::string type_name(MessageType t) { return std::string(name_of(t)); }

std::string message_type(const json& j) {
  auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string error_text(const json& j) {
  auto it = j.find("message");
  if (it == j.end() || !it->is_string()) return "peer sent an error without a message";
  return it->get<std::string>().substr(0, 512);
}

Result<Hello> parse_hello(const json& j) {
  if (auto e = check_type(j, MessageType::kHello)) return *e;
  Fields r(j, "hello");
  Hello m;
  m.version = r.integer<int>("version", 0, 1000000);
  if (!r.error() && m.version != kVersion) {
    return plain_error("handshake", fmt::format("client speaks protocol version {}, this server "
                                                "speaks {}: run the same rdmacheck version on both "
                                                "hosts",
                                                m.version, kVersion));
  }
  if (const json* t = r.object("test")) {
    Fields tr(*t, "test");
    m.test.kind = tr.one_of("kind", TestKind::kPing);
    m.test.transport = tr.one_of("transport", Transport::kRc);
    m.test.op = tr.one_of("op", Op::kSend);
    m.test.max_size = tr.integer<uint32_t>("max_size", 1, kMaxMessageSize);
    m.test.depth = tr.integer<uint32_t>("depth", 1, kMaxDepth);
    if (t->contains("traffic_class")) {
      m.test.traffic_class = tr.integer<uint8_t>("traffic_class", 0, 255);
    }
    if (t->contains("sl")) m.test.sl = tr.integer<uint8_t>("sl", 0, 15);
    if (t->contains("path_mtu_bytes")) {
      m.test.path_mtu = tr.integer<uint16_t>("path_mtu_bytes", 256, 4096);
    }
    if (t->contains("ack_timeout")) m.test.ack_timeout = tr.integer<uint8_t>("ack_timeout", 1, 31);
    if (t->contains("budget_ms")) m.test.budget_ms = tr.integer<uint32_t>("budget_ms", 1, 86400000);
    const auto cm = t->find("cm");
    m.test.cm = cm != t->end() && cm->is_boolean() && cm->get<bool>();
    if (t->contains("probe")) m.test.probe = tr.flag("probe");
    const bool perf = m.test.kind != TestKind::kPing;
    if (perf) {
      m.test.perf = read_perf(tr, tr.object("perf"), m.test.max_size);
    } else if (!tr.error() && t->contains("perf")) {
      r.merge(plain_error("handshake", "hello.test.perf: only bw and lat tests carry it"));
    }
    r.merge(tr.error());
  }
  m.facts = read_facts(r, r.object("facts"));
  m.qp = read_qp(r, r.object("qp"));
  if (!r.error() && m.test.probe &&
      (m.test.kind != TestKind::kPing || m.test.cm || m.test.max_size > kMaxProbeSize ||
       m.test.depth > kMaxProbeDepth)) {
    return plain_error("handshake",
                       fmt::format("hello.test.probe: a probe is a ping of at most {} bytes and "
                                   "{} receives, without rdma_cm",
                                   kMaxProbeSize, kMaxProbeDepth));
  }
  if (!r.error() && !op_allowed_in(m.test.op, m.test.kind)) {
    return plain_error("handshake", fmt::format("hello.test: a {} test does not run {}",
                                                name_of(m.test.kind), name_of(m.test.op)));
  }
  if (!r.error() && (!op_allowed_on(m.test.op, m.test.transport) ||
                     !kind_runs_on(m.test.kind, m.test.transport))) {
    return plain_error("handshake", fmt::format("hello.test: {} does not carry a {} {} test",
                                                name_of(m.test.transport), name_of(m.test.kind),
                                                name_of(m.test.op)));
  }
  if (r.error()) return *r.error();
  return m;
}

bool asks_probe(const json& frame) {
  if (type_of(frame) != MessageType::kHello) return false;
  const auto t = frame.find("test");
  if (t == frame.end() || !t->is_object()) return false;
  const auto p = t->find("probe");
  return p != t->end() && p->is_boolean() && p->get<bool>();
}

Result<Welcome> parse_welcome(const json& j) {
  if (auto e = check_type(j, MessageType::kWelcome)) return *e;
  Fields r(j, "welcome");
  Welcome m;
  m.facts = read_facts(r, r.object("facts"));
  if (j.contains("cm_token")) {
    m.cm_token = r.integer<uint64_t>("cm_token", 1, UINT64_MAX);
  } else {
    m.qp = read_qp(r, r.object("qp"));
  }
  m.timeline = read_steps(r, r.array("timeline", kMaxSteps));
  if (j.contains("probe")) m.probe = r.flag("probe");
  if (r.error()) return *r.error();
  return m;
}

Result<Done> parse_done(const json& j) {
  if (auto e = check_type(j, MessageType::kDone)) return *e;
  Fields r(j, "done");
  Done m;
  m.timeline = read_steps(r, r.array("timeline", kMaxSteps));
  m.sent = r.integer<uint64_t>("sent", 0, UINT64_MAX);
  m.received = r.integer<uint64_t>("received", 0, UINT64_MAX);
  if (r.error()) return *r.error();
  return m;
}

Result<Bye> parse_bye(const json& j) {
  if (auto e = check_type(j, MessageType::kBye)) return *e;
  Fields r(j, "bye");
  Bye m;
  m.timeline = read_steps(r, r.array("timeline", kMaxSteps));
  m.received = r.integer<uint64_t>("received", 0, UINT64_MAX);
  m.replied = r.integer<uint64_t>("replied", 0, UINT64_MAX);
  if (const json* a = r.array("wc_errors", kMaxErrors)) {
    for (const auto& e : *a) {
      if (!e.is_string()) return plain_error("handshake", "bye.wc_errors: must be strings");
      m.wc_errors.push_back(e.get<std::string>().substr(0, kMaxString));
    }
  }
  m.firewall = r.text("firewall");
  if (j.contains("cm_refused")) m.cm_refused = r.text("cm_refused");
  if (!r.error() && j.contains("counters")) {
    const json& c = j["counters"];
    if (!c.is_object() || c.size() > kMaxCounters) {
      return plain_error("handshake", fmt::format("bye.counters: must be an object of at most {} "
                                                  "entries",
                                                  kMaxCounters));
    }
    for (const auto& [name, v] : c.items()) {
      const bool bad_name = name.empty() || name.size() > 128 ||
                            !std::all_of(name.begin(), name.end(), [](unsigned char ch) {
                              return std::isalnum(ch) != 0 || ch == '_' || ch == '/' || ch == '-';
                            });
      if (bad_name || !v.is_number_unsigned()) {
        return plain_error("handshake",
                           "bye.counters: names are counter paths, values "
                           "non-negative integers");
      }
      m.counters.emplace_back(name, v.get<uint64_t>());
    }
  }
  if (!r.error() && j.contains("wall_s")) {
    m.cpu_s = r.number("cpu_s", 0, 1e7);
    m.wall_s = r.number("wall_s", 0, 1e7);
  }
  if (!r.error() && j.contains("bw")) {
    if (const json* a = r.array("bw", kMaxSizes)) {
      for (const auto& e : *a) {
        Fields b(e, "bye.bw[]");
        DirSample d;
        d.size = b.integer<uint32_t>("size", 1, kMaxMessageSize);
        d.msgs = b.integer<uint64_t>("messages", 0, UINT64_MAX);
        d.seconds = b.number("seconds", 0, 1e7);
        r.merge(b.error());
        m.bw.push_back(d);
      }
    }
  }
  if (r.error()) return *r.error();
  return m;
}

Result<Sync> parse_sync(const json& j) {
  if (auto e = check_type(j, MessageType::kSync)) return *e;
  Fields r(j, "sync");
  Sync m;
  m.step = r.integer<uint32_t>("step", 0, kMaxSizes);
  m.phase = r.one_of("phase", SyncPhase::kGo);
  m.ops = r.integer<uint64_t>("ops", 0, UINT64_MAX);
  if (const json* a = r.array("errors", kMaxErrors)) {
    for (const auto& e : *a) {
      if (!e.is_string()) return plain_error("handshake", "sync.errors: must be strings");
      m.errors.push_back(e.get<std::string>().substr(0, kMaxString));
    }
  }
  if (r.error()) return *r.error();
  return m;
}

Result<Ready> parse_ready(const json& j) {
  if (auto e = check_type(j, MessageType::kReady)) return *e;
  Fields r(j, "ready");
  Ready m;
  m.qp = read_qp(r, r.object("qp"));
  if (r.error()) return *r.error();
  return m;
}

}  // namespace rdmacheck::proto

namespace rdmacheck::proto {
namespace {

constexpr size_t kMaxFindings = 256;
constexpr size_t kMaxEvidence = 32;
constexpr size_t kMaxText = 1024;

bool kebab(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return true;
}

}  // namespace

nlohmann::json doctor_request() {
  return {{"type", type_name(MessageType::kDoctorRequest)}, {"version", kVersion}};
}

nlohmann::json doctor_report(const std::string& hostname, const nlohmann::json& findings) {
  return {{"type", type_name(MessageType::kDoctorReport)},
          {"version", kVersion},
          {"hostname", hostname},
          {"findings", findings}};
}

Result<DoctorReport> parse_doctor_report(const nlohmann::json& j) {
  if (auto e = check_type(j, MessageType::kDoctorReport)) return *e;
  Fields r(j, "doctor-report", "doctor-report");
  DoctorReport rep;
  rep.hostname = r.text("hostname", true, kMaxText);
  const json* fs = r.array("findings", kMaxFindings);
  if (r.error()) return *r.error();
  for (const auto& fj : *fs) {
    Fields fr(fj, "doctor-report.finding", "doctor-report");
    Finding f;
    std::string id = fr.text("id", true, kMaxText);
    f.severity = fr.one_of("severity", Severity::kInfo);
    f.layer = fr.one_of("layer", Layer::kDevice);
    f.summary = fr.text("summary", true, kMaxText);
    f.fix = fr.text("fix", false, kMaxText);
    f.subject = fr.text("subject", false, kMaxText);  // absent from older servers
    f.evidence = fr.texts("evidence", kMaxEvidence, kMaxText);
    if (fr.error()) return *fr.error();
    if (!kebab(id)) return plain_error("doctor-report", "finding.id: must be kebab-case");
    set_id_from_wire(f, std::move(id));  // an id this build does not know is carried as it came
    rep.findings.push_back(std::move(f));
  }
  return rep;
}

}  // namespace rdmacheck::proto
