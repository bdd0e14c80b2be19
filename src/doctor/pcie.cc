// PCIe: the NIC's link as trained against what the NIC and its slot can do,
// and whether the link can carry what the RDMA ports run at.
#include "doctor/pcie.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "doctor/check.h"

namespace rdmacheck::doctor {

double parse_gts(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || std::string(end).find("GT/s") == std::string::npos) return 0;
  return v;
}

int pcie_gen(double gts) {
  if (gts >= 63) return 6;
  if (gts >= 31) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7.9) return 3;
  if (gts >= 4.9) return 2;
  if (gts >= 2.4) return 1;
  return 0;
}

double encoding_efficiency(double gts) {
  const int gen = pcie_gen(gts);
  if (gen <= 2) return 8.0 / 10.0;
  if (gen <= 5) return 128.0 / 130.0;
  return 242.0 / 256.0;
}

double usable_gbps(const PcieLink& l) { return l.gts * l.width * encoding_efficiency(l.gts); }

std::string describe(const PcieLink& l) {
  if (!l.known()) return "unknown";
  return fmt::format("Gen{} x{} ({} GT/s)", pcie_gen(l.gts), l.width, l.gts);
}

namespace {

PcieLink read_link(const FsRoot& fs, const std::string& dir, const char* which) {
  PcieLink l;
  l.gts = parse_gts(fs.read_line(dir + "/" + which + "_link_speed").value_or(""));
  l.width = std::atoi(fs.read_line(dir + "/" + which + "_link_width").value_or("0").c_str());
  return l;
}

bool is_pci_address(const std::string& s) {
  static const std::regex re("[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");
  return std::regex_match(s, re);
}

std::string lnk(const std::string& addr, const PcieLink& sta, const PcieLink& cap) {
  return fmt::format("{}: LnkSta {} GT/s x{}, LnkCap {} GT/s x{} (current_link_*, max_link_*)",
                     addr, sta.gts, sta.width, cap.gts, cap.width);
}

// Whether the link as trained carries what the active ports can send.
void check_bandwidth(CheckResult& c, const DeviceInfo& d, const PcieLink& sta) {
  double port_gbps = 0;
  for (const auto& p : d.ports) {
    if (p.active()) port_gbps += p.rate_gbps;
  }
  const double usable = usable_gbps(sta);
  c.fact("usable_gbps", std::round(usable * 10) / 10);
  c.fact("active_port_gbps", port_gbps);
  if (port_gbps > 0 && usable < port_gbps) {
    auto& f = c.add(Severity::kWarn, FindingId::kPcieBandwidthBelowPortRate,
                    fmt::format("{}'s PCIe link ({}) carries about {:.0f} Gb/s, less than its "
                                "ports' {:.0f} Gb/s",
                                d.name, describe(sta), usable, port_gbps));
    f.evidence.push_back(
        fmt::format("{} GT/s x {} lanes x {} encoding = {:.1f} Gb/s before "
                    "TLP/DLLP overhead",
                    sta.gts, sta.width,
                    pcie_gen(sta.gts) <= 2   ? "8b/10b"
                    : pcie_gen(sta.gts) <= 5 ? "128b/130b"
                                             : "242/256",
                    usable));
    for (const auto& p : d.ports) {
      if (p.active()) f.evidence.push_back(fmt::format("port {} rate {}", p.port, p.rate));
    }
    f.fix =
        "the NIC cannot reach line rate in this slot: use a slot with more lanes or a "
        "newer PCIe generation";
  }
}

CheckResult check_device(const Machine& m, const DeviceInfo& d) {
  CheckResult c{.check = "pcie", .layer = Layer::kPerformance, .subject = d.name};
  const std::string dev_link = "/sys/class/infiniband/" + d.name + "/device";
  const auto real = m.fs.resolve(dev_link);
  const std::string dir = real.value_or(dev_link);
  const std::string addr = d.pci_address.empty() ? dir : d.pci_address;
  const PcieLink sta = read_link(m.fs, dir, "current");
  const PcieLink cap = read_link(m.fs, dir, "max");
  c.fact("pci_address", addr);
  // GT/s per lane and lanes as numbers (0 when unknown).
  c.fact("link_gts", sta.gts);
  c.fact("link_width", sta.width);
  c.fact("capability_gts", cap.gts);
  c.fact("capability_width", cap.width);
  if (!sta.known()) {
    c.fact("note", dir + "/current_link_speed/width are not readable (a VF or a virtual device)");
    return c;
  }
  // The upstream port (the slot) is the parent directory of the device in /sys/devices.
  std::string up_addr;
  PcieLink up_cap;
  if (real) {
    const auto parent = std::filesystem::path(*real).parent_path();
    if (is_pci_address(parent.filename().string())) {
      up_addr = parent.filename().string();
      up_cap = read_link(m.fs, parent.string(), "max");
      c.fact("upstream_port", up_addr);
      c.fact("upstream_capability_gts", up_cap.gts);
      c.fact("upstream_capability_width", up_cap.width);
    }
  }
  if (cap.known() && (sta.gts < cap.gts || sta.width < cap.width)) {
    auto& f = c.add(Severity::kWarn, FindingId::kPcieLinkDowngraded,
                    fmt::format("{} ({}) trained at {}, below its {}", d.name, addr, describe(sta),
                                describe(cap)));
    f.evidence.push_back(lnk(addr, sta, cap));
    const bool slot_limits = up_cap.known() && (up_cap.gts < cap.gts || up_cap.width < cap.width);
    if (!up_addr.empty() && up_cap.known()) {
      f.evidence.push_back(
          fmt::format("upstream port {}: LnkCap {} GT/s x{}", up_addr, up_cap.gts, up_cap.width));
    }
    if (slot_limits) {
      f.evidence.push_back(
          fmt::format("the slot (upstream port {}) can do only {}: the card sits "
                      "in a narrower or slower slot than it needs",
                      up_addr, describe(up_cap)));
      f.fix = fmt::format(
          "move the NIC to a slot wired {} (board manual; check the BIOS "
          "bifurcation setting of that slot)",
          describe(cap));
    } else {
      f.evidence.push_back(
          "both ends can do more: the link trained down (seating, riser, BIOS "
          "link-speed setting, or signal errors)");
      f.fix = "reseat the card, check BIOS PCIe settings and riser; verify with lspci -vvv -s " +
              addr + " (LnkSta vs LnkCap)";
    }
  }
  check_bandwidth(c, d, sta);
  return c;
}

}  // namespace

std::vector<CheckResult> check_pcie(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    if (is_software(d)) {
      CheckResult c{.check = "pcie", .layer = Layer::kPerformance, .subject = d.name};
      auto& f = c.add(Severity::kInfo, FindingId::kPcieNotApplicable,
                      d.name + " is a software device: it has no PCIe link of its own");
      f.evidence.push_back("driver " + d.driver + ", no /sys/class/infiniband/" + d.name +
                           "/device; its packets go through the netdev's NIC");
      out.push_back(std::move(c));
      continue;
    }
    out.push_back(check_device(m, d));
  }
  return out;
}

}  // namespace rdmacheck::doctor
