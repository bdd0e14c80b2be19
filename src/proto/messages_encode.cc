// The encoders of proto/messages.h: each message as the JSON it goes on the
// wire as (the decoders and their validator are in messages.cc).
#include <fmt/core.h>

#include "proto/messages.h"

namespace rdmacheck::proto {
namespace {

using nlohmann::json;

json qp_json(const QpInfo& q) {
  return {{"qpn", q.qpn},   {"psn", q.psn},   {"gid", q.gid},   {"lid", q.lid},
          {"addr", q.addr}, {"rkey", q.rkey}, {"qkey", q.qkey}, {"rd_atom", q.rd_atom}};
}
}  // namespace

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
  if (m.test.budget_ms != 0) test["budget_ms"] = m.test.budget_ms;  // serve: the session's end
  if (m.test.probe) test["probe"] = true;
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
  if (m.probe) j["probe"] = true;
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
  if (!m.cm_refused.empty()) j["cm_refused"] = m.cm_refused;
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

}  // namespace rdmacheck::proto
