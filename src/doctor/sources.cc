#include "doctor/sources.h"

#include <fmt/core.h>

#include "verbs/ibv.h"

namespace rdmacheck::doctor {
namespace {

const std::vector<std::vector<std::string>> kRoutingTools = {
    {"ip", "-j", "rule", "show"},  // net/routes.h: kIpRules, kIpRoutes
    {"ip", "-j", "route", "show", "table", "all"},
};

class LiveSources : public Sources {
 public:
  explicit LiveSources(const FsRoot& fs) : fs_(fs) {}
  Result<LinkSettings> link_settings(const std::string& netdev) override {
    return read_link_settings(netdev);
  }
  Result<std::vector<NetAddress>> addresses() override { return read_addresses(); }
  Result<DcbState> dcb(const std::string& netdev) override { return read_dcb(netdev); }
  std::vector<ToolRun> firewall() override { return collect_firewall_outputs(); }
  Result<PortMtu> port_mtu(const std::string& device, int port) override {
    auto list = verbs::DeviceList::get();
    if (!list) return list.error();
    ibv_device* dev = list->find(device);
    if (dev == nullptr) {
      return plain_error("ibv_get_device_list",
                         device + " is not among libibverbs' devices (no provider library?)");
    }
    auto ctx = verbs::open_device(dev);
    if (!ctx) return ctx.error();
    auto attr = verbs::query_port(ctx->get(), static_cast<uint8_t>(port));
    if (!attr) return attr.error();
    return PortMtu{verbs::mtu_bytes(attr->active_mtu), verbs::mtu_bytes(attr->max_mtu)};
  }
  Result<std::vector<qps::QpInfo>> qps() override { return qps::read_qps(fs_); }
  std::vector<ToolRun> routing() override { return run_tools(kRoutingTools); }

 private:
  FsRoot fs_;
};

// Reads ROOT/capture/NAME.json; answers "not in the capture" for what it lacks.
class ReplaySources : public Sources {
 public:
  explicit ReplaySources(const FsRoot& fs) : fs_(fs) {}
  Result<LinkSettings> link_settings(const std::string& netdev) override {
    auto j = keyed("ethtool", netdev);
    if (!j) return j.error();
    return link_settings_from_json(*j);
  }
  Result<std::vector<NetAddress>> addresses() override {
    auto j = file("addresses");
    if (!j) return j.error();
    if (j->contains("error")) return error_from_json((*j)["error"]);
    return addresses_from_json(*j);
  }
  Result<DcbState> dcb(const std::string& netdev) override {
    auto j = keyed("dcb", netdev);
    if (!j) return j.error();
    return dcb_from_json(*j);
  }
  std::vector<ToolRun> firewall() override { return tool_runs("firewall"); }
  std::vector<ToolRun> routing() override { return tool_runs("routing"); }
  Result<PortMtu> port_mtu(const std::string& device, int port) override {
    auto j = keyed("verbs", fmt::format("{}/{}", device, port));
    if (!j) return j.error();
    return PortMtu{j->value("active_mtu", 0), j->value("max_mtu", 0)};
  }
  Result<std::vector<qps::QpInfo>> qps() override {
    auto j = file("qps");
    if (!j) return j.error();
    if (j->contains("error")) return error_from_json((*j)["error"]);
    std::vector<qps::QpInfo> out;
    for (const auto& q : *j) out.push_back(qps::qp_from_json(q));
    return out;
  }

 private:
  std::vector<ToolRun> tool_runs(const std::string& name) const {
    auto j = file(name);
    return j ? tool_runs_from_json(*j) : std::vector<ToolRun>{};
  }
  Result<nlohmann::json> file(const std::string& name) const {
    const std::string path = std::string(kCaptureDir) + "/" + name + ".json";
    auto text = fs_.read(path);
    if (!text)
      return plain_error("replay", fs_.host_path(path).string() + " is not in the capture");
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded())
      return plain_error("replay", fs_.host_path(path).string() + " is not JSON");
    return j;
  }
  Result<nlohmann::json> keyed(const std::string& name, const std::string& key) const {
    auto j = file(name);
    if (!j) return j.error();
    if (!j->contains(key)) return plain_error("replay", key + " is not in " + name + ".json");
    const auto& v = (*j)[key];
    if (v.contains("error")) return error_from_json(v["error"]);
    return v;
  }
  FsRoot fs_;
};

}  // namespace

nlohmann::json error_json(const Error& e) {
  return {{"call", e.call}, {"errno", e.errnum}, {"context", e.context}};
}

Error error_from_json(const nlohmann::json& j) {
  return Error{j.value("call", ""), j.value("errno", 0), j.value("context", "")};
}

std::unique_ptr<Sources> live_sources(const FsRoot& fs) {
  return std::make_unique<LiveSources>(fs);
}
std::unique_ptr<Sources> replay_sources(const FsRoot& fs) {
  return std::make_unique<ReplaySources>(fs);
}
std::unique_ptr<Sources> sources_for(const FsRoot& fs) {
  if (fs.is_live()) return live_sources(fs);
  return replay_sources(fs);
}

namespace {

template <typename T, typename ToJson>
void remember(nlohmann::json& slot, const Result<T>& r, ToJson to) {
  slot = r ? to(*r) : nlohmann::json{{"error", error_json(r.error())}};
}

}  // namespace

Result<LinkSettings> RecordingSources::link_settings(const std::string& netdev) {
  auto r = inner_->link_settings(netdev);
  remember(files_["ethtool"][netdev], r, [](const LinkSettings& l) { return to_json(l); });
  return r;
}

Result<std::vector<NetAddress>> RecordingSources::addresses() {
  auto r = inner_->addresses();
  remember(files_["addresses"], r, [](const std::vector<NetAddress>& a) { return to_json(a); });
  return r;
}

Result<DcbState> RecordingSources::dcb(const std::string& netdev) {
  auto r = inner_->dcb(netdev);
  remember(files_["dcb"][netdev], r, [](const DcbState& d) { return to_json(d); });
  return r;
}

std::vector<ToolRun> RecordingSources::firewall() {
  auto runs = inner_->firewall();
  files_["firewall"] = tool_runs_json(runs);
  return runs;
}

std::vector<ToolRun> RecordingSources::routing() {
  auto runs = inner_->routing();
  files_["routing"] = tool_runs_json(runs);
  return runs;
}

Result<PortMtu> RecordingSources::port_mtu(const std::string& device, int port) {
  auto r = inner_->port_mtu(device, port);
  remember(files_["verbs"][fmt::format("{}/{}", device, port)], r, [](const PortMtu& m) {
    return nlohmann::json{{"active_mtu", m.active_mtu}, {"max_mtu", m.max_mtu}};
  });
  return r;
}

Result<std::vector<qps::QpInfo>> RecordingSources::qps() {
  auto r = inner_->qps();
  remember(files_["qps"], r, [](const std::vector<qps::QpInfo>& qs) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& q : qs) a.push_back(qps::to_json(q));
    return a;
  });
  return r;
}

}  // namespace rdmacheck::doctor
