#include "proto/messages.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace rdmacheck::proto {
namespace {

using nlohmann::json;

constexpr size_t kMaxString = 256;
constexpr size_t kMaxSteps = 32;
constexpr size_t kMaxErrors = 64;

// Reads fields of one JSON object, remembering the first problem so a parser
// reads straight through and checks once at the end.
class Fields {
 public:
  // CALL names the message family in errors ("handshake", "doctor-report").
  Fields(const json& j, std::string where, const char* call = "handshake")
      : j_(j), where_(std::move(where)), call_(call) {
    if (!j_.is_object()) fail("", "not an object");
  }

  template <typename Int>
  Int integer(const char* key, uint64_t lo, uint64_t hi) {
    const json* v = find(key);
    if (v == nullptr) return 0;
    // Parsed text gives non-negative integers as unsigned; built in memory, as signed.
    const bool integral =
        v->is_number_unsigned() || (v->is_number_integer() && v->get<int64_t>() >= 0);
    if (!integral || v->get<uint64_t>() < lo || v->get<uint64_t>() > hi) {
      fail(key, fmt::format("must be an integer in {}..{}", lo, hi));
      return 0;
    }
    return static_cast<Int>(v->get<uint64_t>());
  }

  double number(const char* key, double lo, double hi) {
    const json* v = find(key);
    if (v == nullptr) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < lo ||
        v->get<double>() > hi) {
      fail(key, fmt::format("must be a number in {}..{}", lo, hi));
      return 0;
    }
    return v->get<double>();
  }

  std::string text(const char* key, bool required = true, size_t max = kMaxString) {
    const json* v = find(key, required);
    if (v == nullptr) return {};
    return checked_text(key, *v, max);
  }

  // An array of at most MAX_COUNT strings of at most MAX_LEN characters each.
  std::vector<std::string> texts(const char* key, size_t max_count, size_t max_len) {
    std::vector<std::string> out;
    const json* a = array(key, max_count);
    if (a == nullptr) return out;
    for (const auto& v : *a) {
      std::string t = checked_text(key, v, max_len);
      if (error_) return {};
      out.push_back(std::move(t));
    }
    return out;
  }

  // A text from a fixed list (QP and CM step names, which stay text on the wire).
  std::string text_in(const char* key, std::initializer_list<const char*> allowed) {
    std::string s = text(key);
    if (!error_) {
      for (const char* a : allowed) {
        if (s == a) return s;
      }
      fail(key, fmt::format("unknown value '{}'", s));
    }
    return {};
  }

  // A name from E's table (base/enum_table.h).
  template <typename E>
  E one_of(const char* key, E fallback) {
    std::string s = text(key);
    if (error_) return fallback;
    if (auto v = parse_enum<E>(s)) return *v;
    fail(key, fmt::format("unknown value '{}' (one of {})", s, enum_choices<E>(", ")));
    return fallback;
  }

  std::string gid(const char* key) {
    std::string s = text(key);
    if (!error_ && !valid_gid_text(s)) fail(key, "must be a GID (8 groups of 4 hex digits)");
    return s;
  }

  bool flag(const char* key) {
    const json* v = find(key);
    if (v != nullptr && !v->is_boolean()) {
      fail(key, "must be true or false");
      return false;
    }
    return v != nullptr && v->get<bool>();
  }

  const json* object(const char* key) {
    const json* v = find(key);
    if (v != nullptr && !v->is_object()) {
      fail(key, "must be an object");
      return nullptr;
    }
    return v;
  }

  const json* array(const char* key, size_t max) {
    const json* v = find(key);
    if (v != nullptr && (!v->is_array() || v->size() > max)) {
      fail(key, fmt::format("must be an array of at most {} entries", max));
      return nullptr;
    }
    return v;
  }

  void merge(const std::optional<Error>& e) {
    if (e && !error_) error_ = e;
  }
  void merge(const Error& e) {
    if (!error_) error_ = e;
  }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  const json* find(const char* key, bool required = true) {
    if (error_) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string checked_text(const char* key, const json& v, size_t max) {
    if (!v.is_string() || v.get_ref<const std::string&>().size() > max) {
      fail(key, fmt::format("must be a string of at most {} characters", max));
      return {};
    }
    for (unsigned char c : v.get_ref<const std::string&>()) {
      if (std::iscntrl(c) != 0) {
        fail(key, "must not contain control characters");
        return {};
      }
    }
    return v.get<std::string>();
  }
  void fail(const std::string& key, const std::string& why) {
    if (!error_) {
      error_ =
          plain_error(call_, fmt::format("{}{}{}: {}", where_, key.empty() ? "" : ".", key, why));
    }
  }

  const json& j_;
  std::string where_;
  const char* call_;
  std::optional<Error> error_;
};

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

json qp_json(const QpInfo& q) {
  return {{"qpn", q.qpn},   {"psn", q.psn},   {"gid", q.gid},   {"lid", q.lid},
          {"addr", q.addr}, {"rkey", q.rkey}, {"qkey", q.qkey}, {"rd_atom", q.rd_atom}};
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

json error_message(const std::string& text) {
  return {{"type", type_name(MessageType::kError)}, {"version", kVersion}, {"message", text}};
}

json to_json(const HostFacts& f) {
  return {{"hostname", f.hostname},
          {"version", f.version},
          {"device", f.device},
          {"port", f.port},
          {"gid_index", f.gid_index},
          {"gid", f.gid},
          {"gid_type", f.gid_type},
          {"active_mtu_bytes", f.active_mtu},
          {"netdev_mtu_bytes", f.netdev_mtu},
          {"rate_gbps", f.rate_gbps},
          {"netdev", f.netdev},
          {"traffic_class", f.traffic_class},
          {"sl", f.sl},
          {"path_mtu_bytes", f.path_mtu},
          {"choice", f.choice},
          {"local_address", f.local_address},
          {"peer_address", f.peer_address},
          {"forced", f.forced}};
}

json to_json(const std::vector<Step>& steps) {
  json a = json::array();
  for (const auto& s : steps) {
    json e = {{"name", s.name}, {"usec", s.usec}, {"ok", s.ok}};
    if (!s.error.empty()) e["error"] = s.error;
    a.push_back(std::move(e));
  }
  return a;
}

json to_json(const Hello& m) {
  json test = {{"kind", name_of(m.test.kind)},
               {"transport", name_of(m.test.transport)},
               {"op", name_of(m.test.op)},
               {"max_size", m.test.max_size},
               {"depth", m.test.depth},
               {"cm", m.test.cm},
               {"traffic_class", m.test.traffic_class},
               {"sl", m.test.sl}};
  // Sent only when asked for, so a server from before -m/-u still reads the hello.
  if (m.test.path_mtu != 0) test["path_mtu_bytes"] = m.test.path_mtu;
  if (m.test.ack_timeout != 0) test["ack_timeout"] = m.test.ack_timeout;
  if (m.test.perf) {
    const PerfParams& p = *m.test.perf;
    test["perf"] = {{"sizes", p.sizes},
                    {"iterations", p.iterations},
                    {"duration_ms", p.duration_ms},
                    {"bidir", p.bidir},
                    {"validate", p.validate},
                    {"seed", p.seed},
                    {"tx_depth", p.tx_depth},
                    {"post_list", p.post_list},
                    {"cq_mod", p.cq_mod},
                    {"inline_size", p.inline_size}};
  }
  return {{"type", type_name(MessageType::kHello)},
          {"version", m.version},
          {"test", std::move(test)},
          {"facts", to_json(m.facts)},
          {"qp", qp_json(m.qp)}};
}

json to_json(const Welcome& m) {
  json j = {{"type", type_name(MessageType::kWelcome)},
            {"version", kVersion},
            {"facts", to_json(m.facts)},
            {"timeline", to_json(m.timeline)}};
  if (m.cm_token != 0) {
    j["cm_token"] = m.cm_token;
  } else {
    j["qp"] = qp_json(m.qp);
  }
  return j;
}

json to_json(const Done& m) {
  return {{"type", type_name(MessageType::kDone)},
          {"version", kVersion},
          {"timeline", to_json(m.timeline)},
          {"sent", m.sent},
          {"received", m.received}};
}

json to_json(const Bye& m) {
  json j = {{"type", type_name(MessageType::kBye)},
            {"version", kVersion},
            {"timeline", to_json(m.timeline)},
            {"received", m.received},
            {"replied", m.replied},
            {"wc_errors", m.wc_errors},
            {"firewall", m.firewall}};
  if (!m.counters.empty()) {
    json c = json::object();
    for (const auto& [name, delta] : m.counters) c[name] = delta;
    j["counters"] = std::move(c);
  }
  if (m.wall_s > 0) {
    j["cpu_s"] = m.cpu_s;
    j["wall_s"] = m.wall_s;
  }
  if (!m.bw.empty()) {
    json a = json::array();
    for (const auto& b : m.bw) {
      a.push_back({{"size", b.size}, {"messages", b.msgs}, {"seconds", b.seconds}});
    }
    j["bw"] = std::move(a);
  }
  return j;
}

json to_json(const Sync& m) {
  return {{"type", type_name(MessageType::kSync)},
          {"version", kVersion},
          {"step", m.step},
          {"phase", name_of(m.phase)},
          {"ops", m.ops},
          {"errors", m.errors}};
}

json to_json(const Ready& m) {
  return {{"type", type_name(MessageType::kReady)}, {"version", kVersion}, {"qp", qp_json(m.qp)}};
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
    const auto cm = t->find("cm");
    m.test.cm = cm != t->end() && cm->is_boolean() && cm->get<bool>();
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
