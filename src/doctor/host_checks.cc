// Host-wide checks: NUMA placement of each device, the locked-memory limit
// and the packet filter (RoCE v2 is UDP port 4791).
#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "doctor/check.h"
#include "doctor/memlock.h"
#include "host/numa.h"

namespace rdmacheck::doctor {

std::optional<MemlockLimit> parse_memlock(const std::string& limits) {
  std::istringstream in(limits);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max locked memory", 0) != 0) continue;
    std::istringstream w(line.substr(17));
    std::string soft;
    std::string hard;
    if (!(w >> soft >> hard)) return std::nullopt;
    const auto value = [](const std::string& s) -> std::optional<uint64_t> {
      if (s == "unlimited") return std::nullopt;
      return std::stoull(s);
    };
    try {
      return MemlockLimit{value(soft), value(hard)};
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<bool> has_ipc_lock(const std::string& status) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    try {
      return (std::stoull(trim(line.substr(7)), nullptr, 16) >> 14 & 1) != 0;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string bytes_text(std::optional<uint64_t> b) {
  if (!b) return "unlimited";
  if (*b >= (1ull << 30) && *b % (1ull << 30) == 0) return fmt::format("{} GiB", *b >> 30);
  if (*b >= (1ull << 20) && *b % (1ull << 20) == 0) return fmt::format("{} MiB", *b >> 20);
  if (*b >= (1ull << 10) && *b % (1ull << 10) == 0) return fmt::format("{} KiB", *b >> 10);
  return fmt::format("{} bytes", *b);
}

std::vector<CheckResult> check_numa(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    CheckResult c{.check = "numa", .layer = Layer::kPerformance, .subject = d.name};
    const std::string netdev = d.ports.empty() ? "" : d.ports.front().netdev;
    const NumaPlacement p = rdma_device_numa(m.fs, d.name, netdev);
    c.fact("numa_node", p.node);
    c.fact("nodes_online", p.nodes_online);
    if (p.node >= 0) {
      c.fact("cpus", p.cpulist);
      c.fact("pin_with", fmt::format("taskset -c {} (or numactl --cpunodebind={} --membind={})",
                                     p.cpulist, p.node, p.node));
    } else {
      c.fact("note", p.source.empty() ? "no numa_node file for the device or its netdev"
                                      : p.source +
                                            " is -1: the platform reports no NUMA "
                                            "affinity (single node, VM, or firmware)");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CheckResult> check_memlock(const Machine& m) {
  CheckResult c{.check = "memlock", .layer = Layer::kConnection, .subject = "host"};
  const auto limits = m.fs.read("/proc/self/limits");
  const auto lim = limits ? parse_memlock(*limits) : std::nullopt;
  if (!lim) {
    c.fact("memlock_error", "could not read /proc/self/limits");
    return {c};
  }
  const auto status = m.fs.read("/proc/self/status");
  std::optional<bool> cap;
  if (status) cap = has_ipc_lock(*status);
  // Bytes as numbers (the unit in the key); "unlimited" is a value of its own.
  auto bytes = [](std::optional<uint64_t> b) {
    return b ? nlohmann::json(*b) : nlohmann::json("unlimited");
  };
  c.fact("soft_bytes", bytes(lim->soft));
  c.fact("hard_bytes", bytes(lim->hard));
  c.fact("cap_ipc_lock", cap.has_value() ? nlohmann::json(cap.value()) : nlohmann::json());
  if (!lim->soft || *lim->soft >= kMemlockMinBytes) return {c};
  const std::string line = fmt::format("/proc/self/limits: Max locked memory soft {} hard {}",
                                       bytes_text(lim->soft), bytes_text(lim->hard));
  const std::string fix =
      "raise it: '* soft memlock unlimited' and '* hard memlock unlimited' in "
      "/etc/security/limits.d/rdma.conf (log in again); LimitMEMLOCK=infinity "
      "for systemd services; ulimit -l unlimited in this shell";
  if (cap.value_or(false)) {
    auto& f = c.add(Severity::kInfo, FindingId::kMemlockLowButPrivileged,
                    fmt::format("the locked-memory limit is {}, but this process has "
                                "CAP_IPC_LOCK, which lifts it; unprivileged users stay limited",
                                bytes_text(lim->soft)));
    f.evidence.push_back(line);
    f.evidence.push_back("/proc/self/status: CapEff has CAP_IPC_LOCK (bit 14)");
    f.fix = fix;
    return {c};
  }
  auto& f = c.add(Severity::kWarn, FindingId::kMemlockTooLow,
                  fmt::format("the locked-memory limit is {}: registering more than that fails "
                              "(ibv_reg_mr: Cannot allocate memory)",
                              bytes_text(lim->soft)));
  f.evidence.push_back(line);
  f.evidence.push_back(
      fmt::format("below {} ordinary benchmark and MPI buffers cannot be "
                  "registered; CAP_IPC_LOCK is {}",
                  bytes_text(kMemlockMinBytes), cap ? "not held" : "not readable"));
  f.fix = fix;
  return {c};
}

std::vector<CheckResult> check_firewall(const Machine& m) {
  CheckResult c{.check = "firewall", .layer = Layer::kConnection, .subject = "host"};
  bool roce = false;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) roce = roce || p.ethernet();
  }
  if (!m.devices.empty() && !roce) {
    c.fact("note", "no RoCE port: InfiniBand does not go through the IP packet filter");
    return {c};
  }
  const auto runs = m.src.firewall();
  if (runs.empty()) {
    c.add(Severity::kInfo, FindingId::kFirewallUnreadable, "the packet filter was not captured")
        .evidence.push_back("no capture/firewall.json under the replayed root");
    return {c};
  }
  const FirewallReport r = evaluate_firewall(runs);
  c.fact("source", r.source);
  if (!r.readable) {
    auto& f = c.add(Severity::kInfo, FindingId::kFirewallUnreadable,
                    "could not read the packet filter, so whether it drops RoCE (UDP 4791) is "
                    "unknown");
    f.evidence.push_back(r.note);
    f.fix = r.timed_out ? "the tools were killed at their deadline on a busy host: run "
                          "rdmacheck doctor again, or read nft list ruleset and iptables-save "
                          "by hand"
                        : "run rdmacheck doctor as root to read iptables/nft rules";
    return {c};
  }
  c.fact("blocking_rules", r.rules.size());
  const bool every_packet = std::any_of(r.blocking.begin(), r.blocking.end(),
                                        [](const BlockingRule& b) { return b.only.empty(); });
  if (every_packet) {
    auto& f = c.add(Severity::kFail, FindingId::kFirewallBlocksRoce,
                    "the packet filter drops RoCE v2 (UDP port 4791): QPs connect but no data "
                    "or ACK gets through (retry exceeded)");
    f.evidence = r.rules;
    f.fix =
        "iptables -I INPUT -p udp --dport 4791 -j ACCEPT (and OUTPUT if a rule there drops "
        "it), or delete the rule; do the same on the peer";
  } else if (!r.rules.empty()) {
    auto& f = c.add(Severity::kWarn, FindingId::kFirewallBlocksSomeRoce,
                    "the packet filter drops some RoCE v2 (UDP port 4791) packets: those its "
                    "rules match (by size, address, interface, ...); the rest pass");
    f.evidence = r.rules;
    f.fix =
        "exempt RoCE before the rule: iptables -I INPUT -p udp --dport 4791 -j ACCEPT, or nft "
        "insert rule inet filter input udp dport 4791 accept";
  }
  return {c};
}

}  // namespace rdmacheck::doctor
