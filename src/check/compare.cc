#include <fmt/core.h>

#include <algorithm>

#include "check/check.h"
#include "findings/port_subject.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::check {

LayerStatus status_of(const std::vector<Finding>& fs) {
  switch (worst(fs)) {
    case Severity::kFail:
      return LayerStatus::kFail;
    case Severity::kWarn:
      return LayerStatus::kWarn;
    default:
      return LayerStatus::kPass;
  }
}

std::vector<Finding> compare_hosts(const proto::HostFacts& l, const proto::HostFacts& p,
                                   const std::string& peer_name) {
  std::vector<Finding> out;
  const auto both = [&](const std::string& what, const auto& a, const auto& b) {
    return fmt::format("{}: {} here, {} on {}", what, a, b, peer_name);
  };
  if (l.netdev_mtu != 0 && p.netdev_mtu != 0 && l.netdev_mtu != p.netdev_mtu) {
    Finding f = make_finding(FindingId::kMtuMismatch, Severity::kWarn, Layer::kDevice,
                             "the two hosts' netdev MTUs differ: RoCE uses the smaller "
                             "path MTU, and anything sized for the larger one is dropped");
    f.evidence.push_back(both("netdev MTU", l.netdev_mtu, p.netdev_mtu));
    f.evidence.push_back(both("RoCE active MTU", l.active_mtu, p.active_mtu));
    f.fix =
        "set the same MTU on both hosts and every switch port between them "
        "(ip link set DEV mtu 9000)";
    out.push_back(std::move(f));
  }
  if (!l.gid_type.empty() && !p.gid_type.empty() && l.gid_type != p.gid_type) {
    Finding f = make_finding(FindingId::kGidTypeMismatch, Severity::kFail, Layer::kDevice,
                             "the two hosts use different GID types");
    f.evidence.push_back(both("GID type", l.gid_type, p.gid_type));
    f.fix = "use the RoCE v2 GID of the right address on both sides (-x N)";
    out.push_back(std::move(f));
  }
  if (l.rate_gbps > 0 && p.rate_gbps > 0 && l.rate_gbps != p.rate_gbps) {
    Finding f = make_finding(FindingId::kLinkRateMismatch, Severity::kWarn, Layer::kDevice,
                             "the two ports run at different rates: the slower one bounds "
                             "the link");
    f.evidence.push_back(both("port rate (Gb/s)", l.rate_gbps, p.rate_gbps));
    f.fix = "check cables, optics and switch ports of the slower side (ethtool DEV)";
    out.push_back(std::move(f));
  }
  if (!l.version.empty() && !p.version.empty() && l.version != p.version) {
    Finding f = make_finding(FindingId::kVersionMismatch, Severity::kInfo, Layer::kDevice,
                             "the two hosts run different rdmacheck versions");
    f.evidence.push_back(both("rdmacheck", l.version, p.version));
    out.push_back(std::move(f));
  }
  for (auto& f : out) f.host = "both";
  return out;
}

int exit_status(const CheckReport& r) {
  int worst_status = 0;
  for (const auto& l : r.layers) {
    if (l.status == LayerStatus::kFail) worst_status = 2;
    if (l.status == LayerStatus::kWarn) worst_status = std::max(worst_status, 1);
  }
  if (!r.expired_in.empty()) worst_status = 2;
  return worst_status;
}

void merge_finding(std::vector<Finding>& fs, Finding f) {
  auto have = std::find_if(fs.begin(), fs.end(), [&](const Finding& h) { return same_id(h, f); });
  if (have == fs.end()) {
    fs.push_back(std::move(f));
    return;
  }
  const bool other_host = !f.host.empty() && !have->host.empty() && f.host != have->host &&
                          have->host.find(f.host) == std::string::npos && have->host != "both";
  const bool tagged = have->host.find(", ") != std::string::npos;
  if (other_host) {
    if (!tagged) {
      for (auto& e : have->evidence) e = have->host + ": " + e;
    }
    have->host += ", " + f.host;
  }
  const bool tag = other_host || tagged;
  for (const auto& e : f.evidence) {
    if (!tag) {
      if (std::find(have->evidence.begin(), have->evidence.end(), e) == have->evidence.end()) {
        have->evidence.push_back(e);
      }
      continue;
    }
    // The same line from the other host: one line naming both.
    bool found = false;
    for (auto& line : have->evidence) {
      const auto colon = line.find(": ");
      if (colon == std::string::npos || line.substr(colon + 2) != e) continue;
      if (line.substr(0, colon).find(f.host) == std::string::npos) {
        line = line.substr(0, colon) + ", " + f.host + ": " + e;
      }
      found = true;
      break;
    }
    if (!found) have->evidence.push_back(f.host + ": " + e);
  }
  if (f.severity > have->severity) {
    have->severity = f.severity;
    have->summary = f.summary;
  }
  if (have->fix.empty()) have->fix = f.fix;
}

std::string port_under_test(const std::vector<std::pair<std::string, std::string>>& ports,
                            const std::string& device, int port) {
  if (!device.empty() && port > 0) return port_subject(device, port);
  for (const auto& [subject, state] : ports) {
    const auto p = parse_port_subject(subject);
    if (!p || (!device.empty() && p->device != device) || (port > 0 && p->port != port)) continue;
    if (parse_enum<PortState>(state) == PortState::kActive) return subject;
  }
  // Nothing ACTIVE: rdmacheck falls back to the first device (and its first port).
  for (const auto& [subject, state] : ports) {
    const auto p = parse_port_subject(subject);
    if (!p || (!device.empty() && p->device != device)) continue;
    return port > 0 ? port_subject(p->device, port) : subject;
  }
  return {};
}

std::string tested_port(const std::optional<proto::HostFacts>& used,
                        const std::vector<std::pair<std::string, std::string>>& ports,
                        const conn::DeviceChoice& forced) {
  if (used && !used->device.empty()) return port_subject(used->device, used->port);
  return port_under_test(ports, forced.device, forced.ib_port);
}

void scope_to_port(std::vector<Finding>& fs, const std::string& under_test) {
  if (under_test.empty()) return;
  for (auto& f : fs) {
    // Findings about one port (port state, its GIDs, its netdev, its counters)
    // name it as "dev/port"; host-wide ones do not and stay as they are.
    if (!parse_port_subject(f.subject) || f.subject == under_test) continue;
    if (f.severity <= Severity::kInfo) continue;
    f.severity = Severity::kInfo;
    f.summary += fmt::format(" (not the port under test, {})", under_test);
  }
}

std::optional<Finding> cm_device_differs(const conn::PingReport& verbs,
                                         const conn::PingReport& cm) {
  const auto& v = verbs.obs.local;
  const auto& c = cm.obs.local;
  if (!v || !c || v->device.empty() || c->device.empty()) return std::nullopt;
  if (v->device == c->device && v->port == c->port) return std::nullopt;
  const bool failed = cm.obs.failed != conn::Stage::kDone;
  const std::string src = v->local_address.empty() ? "ADDR" : v->local_address;
  Finding f{FindingId::kCmDeviceDiffers, failed ? Severity::kFail : Severity::kWarn,
            Layer::kConnection,
            fmt::format("rdma_cm resolved {} to {} port {}, but the route towards it uses {} "
                        "port {}{}",
                        cm.options.target.host, c->device, c->port, v->device, v->port,
                        failed ? ": the rdma_cm connection failed on the other NIC"
                               : "; both connected, but rdma_cm applications use the other NIC")};
  f.subject = c->device + "/" + std::to_string(c->port);
  f.evidence.push_back("verbs path: " + v->choice);
  f.evidence.push_back("rdma_cm: " + c->choice);
  if (failed) {
    f.evidence.push_back(
        fmt::format("rdma_cm ping failed at {}: {}", name_of(cm.obs.failed), cm.obs.error));
  }
  f.fix = conn::cm_source_fix(src, verbs.obs.peer && !verbs.obs.peer->local_address.empty()
                                       ? verbs.obs.peer->local_address
                                       : cm.options.target.host);
  return f;
}

void fold_under_firewall(std::vector<Finding>& fs) {
  auto cause = std::find_if(fs.begin(), fs.end(), [](const Finding& f) {
    return f.is_any({FindingId::kFirewallBlocksRoce, FindingId::kFirewallBlocksSomeRoce});
  });
  auto effect = std::find_if(fs.begin(), fs.end(), [](const Finding& f) {
    return f.severity == Severity::kFail &&
           f.is_any({FindingId::kMtuBlackHole, FindingId::kRocePacketsLost});
  });
  if (cause == fs.end() || effect == fs.end()) return;
  Finding folded = *cause;
  folded.severity = Severity::kFail;
  // The effect's own guess at a cause ("something on the path ...") is what the rule answers.
  const std::string seen = effect->summary.substr(0, effect->summary.find(": "));
  folded.summary = fmt::format(
      "a firewall rule{} matches RoCE v2 (UDP 4791) packets, and such packets died "
      "here: {}",
      folded.host.empty() ? "" : " on " + folded.host, seen);
  folded.evidence.push_back(fmt::format("consequence: {}: {}", id_name(*effect), effect->summary));
  for (const auto& e : effect->evidence) folded.evidence.push_back(e);
  const FindingId effect_id = effect->id;
  const FindingId cause_id = cause->id;
  std::vector<Finding> out;
  out.push_back(std::move(folded));
  for (auto& f : fs) {
    if (f.id != effect_id && f.id != cause_id) out.push_back(std::move(f));
  }
  fs = std::move(out);
}

Finding judged_by_traffic(Finding f, const std::string& what_passed) {
  if (f.is_any({FindingId::kFirewallBlocksRoce, FindingId::kFirewallBlocksSomeRoce})) {
    // Whatever the rule would drop, it did not drop this path's traffic.
    f.severity = std::min(f.severity, Severity::kWarn);
    f.summary = fmt::format(
        "a firewall rule matches RoCE v2 (UDP 4791), but {}: it does not drop this traffic; it "
        "may drop other peers', interfaces' or sizes' packets",
        what_passed);
    return f;
  }
  if (f.severity < Severity::kFail) return f;
  f.severity = Severity::kWarn;
  f.summary += fmt::format(" (yet {})", what_passed);
  return f;
}

std::vector<Finding> top_findings(const CheckReport& r, size_t n) {
  std::vector<Finding> all;
  for (const auto& l : r.layers) {
    for (const auto& f : l.findings) {
      if (f.severity >= Severity::kWarn) all.push_back(f);
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace rdmacheck::check
