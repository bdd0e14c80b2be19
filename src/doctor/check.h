// What every doctor check produces: the facts it read (each with where it
// came from in its wording) and the findings it concluded, for one subject
// (a port, a netdev, the host). Checks measure; the printer renders.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "doctor/sources.h"
#include "findings/finding.h"
#include "sysfs/fs_root.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::doctor {

struct CheckResult {
  std::string check;  // "port-state", "pcie", ...
  Layer layer = Layer::kDevice;
  std::string subject;  // "rxe0/1", "eth0", "host"
  std::vector<std::pair<std::string, nlohmann::json>> facts;
  std::vector<Finding> findings;

  void fact(std::string key, nlohmann::json value) {
    facts.emplace_back(std::move(key), std::move(value));
  }
  Finding& add(Severity s, FindingId id, std::string summary) {
    findings.push_back(make_finding(id, s, layer, std::move(summary)));
    return findings.back();
  }
  [[nodiscard]] Severity status() const { return worst(findings); }
};

// What the checks look at: the file tree, the other sources, and the RDMA
// devices read once from sysfs (with port MTUs filled in where known).
struct Machine {
  const FsRoot& fs;
  Sources& src;
  std::vector<DeviceInfo> devices;
};

bool is_software(const DeviceInfo& d);  // rxe, siw: no PCIe, nominal rates

// The checks, one group per file (named beside each), each unit-tested on fixtures.
std::vector<CheckResult> check_presence(const Machine& m);  // presence.cc
// The machine lists no RDMA device: doctor's no-rdma-device finding, with
// why (kernel, modules, NICs, rdma-core) and the fix those leave standing.
// Every command that finds no device says this one (presence.cc).
std::optional<Finding> no_rdma_device(const FsRoot& fs);
std::vector<CheckResult> check_ports(const Machine& m);      // port.cc
std::vector<CheckResult> check_gids(const Machine& m);       // gid.cc
std::vector<CheckResult> check_netdevs(const Machine& m);    // netdev.cc (link speed)
std::vector<CheckResult> check_mtu(const Machine& m);        // mtu.cc
std::vector<CheckResult> check_pcie(const Machine& m);       // pcie.cc
std::vector<CheckResult> check_numa(const Machine& m);       // host_checks.cc
std::vector<CheckResult> check_cpu(const Machine& m);        // cpu.cc
std::vector<CheckResult> check_memlock(const Machine& m);    // host_checks.cc
std::vector<CheckResult> check_firewall(const Machine& m);   // host_checks.cc
std::vector<CheckResult> check_lossless(const Machine& m);   // lossless.cc
std::vector<CheckResult> check_counters(const Machine& m);   // counters.cc
std::vector<CheckResult> check_multi_nic(const Machine& m);  // multinic.cc

}  // namespace rdmacheck::doctor
