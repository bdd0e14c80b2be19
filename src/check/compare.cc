#include <fmt/core.h>

#include <algorithm>

#include "check/check.h"

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
    Finding f = make_finding("mtu-mismatch", Severity::kWarn, Layer::kDevice,
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
    Finding f = make_finding("gid-type-mismatch", Severity::kFail, Layer::kDevice,
                             "the two hosts use different GID types");
    f.evidence.push_back(both("GID type", l.gid_type, p.gid_type));
    f.fix = "use the RoCE v2 GID of the right address on both sides (-x N)";
    out.push_back(std::move(f));
  }
  if (l.rate_gbps > 0 && p.rate_gbps > 0 && l.rate_gbps != p.rate_gbps) {
    Finding f = make_finding("link-rate-mismatch", Severity::kWarn, Layer::kDevice,
                             "the two ports run at different rates: the slower one bounds "
                             "the link");
    f.evidence.push_back(both("port rate (Gb/s)", l.rate_gbps, p.rate_gbps));
    f.fix = "check cables, optics and switch ports of the slower side (ethtool DEV)";
    out.push_back(std::move(f));
  }
  if (!l.version.empty() && !p.version.empty() && l.version != p.version) {
    Finding f = make_finding("version-mismatch", Severity::kInfo, Layer::kDevice,
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
