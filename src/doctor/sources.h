// Everything doctor learns from the machine that is not a file: ethtool link
// settings, IP addresses, DCB, the packet filter, port MTUs (libibverbs) and
// QPs (RDMA netlink). Live reads the kernel; Replay reads what `doctor
// --capture` wrote under ROOT/capture/, so a capture replays with --root.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "doctor/dcb.h"
#include "doctor/ethtool.h"
#include "doctor/netaddr.h"
#include "host/firewall.h"
#include "qps/qp_list.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::doctor {

struct PortMtu {
  int active_mtu = 0;  // bytes
  int max_mtu = 0;
};

class Sources {
 public:
  virtual ~Sources() = default;
  virtual Result<LinkSettings> link_settings(const std::string& netdev) = 0;
  virtual Result<std::vector<NetAddress>> addresses() = 0;
  virtual Result<DcbState> dcb(const std::string& netdev) = 0;
  virtual std::vector<ToolRun> firewall() = 0;
  virtual Result<PortMtu> port_mtu(const std::string& device, int port) = 0;
  virtual Result<std::vector<qps::QpInfo>> qps() = 0;
  // `ip -j rule show` and `ip -j route show table all`: which NIC routes to
  // which subnet, and the per-NIC policy rules.
  virtual std::vector<ToolRun> routing() = 0;
};

// Where a capture keeps the non-file sources, relative to its root.
constexpr const char* kCaptureDir = "/capture";

std::unique_ptr<Sources> live_sources(const FsRoot& fs);
std::unique_ptr<Sources> replay_sources(const FsRoot& fs);
// Live when fs is rooted at "/", replay otherwise.
std::unique_ptr<Sources> sources_for(const FsRoot& fs);

// Wraps live sources and remembers every answer, to write it as a capture.
class RecordingSources : public Sources {
 public:
  explicit RecordingSources(std::unique_ptr<Sources> inner) : inner_(std::move(inner)) {}
  Result<LinkSettings> link_settings(const std::string& netdev) override;
  Result<std::vector<NetAddress>> addresses() override;
  Result<DcbState> dcb(const std::string& netdev) override;
  std::vector<ToolRun> firewall() override;
  Result<PortMtu> port_mtu(const std::string& device, int port) override;
  Result<std::vector<qps::QpInfo>> qps() override;
  std::vector<ToolRun> routing() override;

  // ethtool.json, addresses.json, dcb.json, firewall.json, verbs.json, qps.json, routing.json.
  [[nodiscard]] std::map<std::string, nlohmann::json> files() const { return files_; }

 private:
  std::unique_ptr<Sources> inner_;
  std::map<std::string, nlohmann::json> files_;
};

nlohmann::json error_json(const Error& e);
Error error_from_json(const nlohmann::json& j);

}  // namespace rdmacheck::doctor
