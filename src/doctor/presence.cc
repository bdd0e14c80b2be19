// Are there RDMA devices, and can user space use them? When there are none,
// say why from what the machine shows: kernel, modules, NICs, rdma-core.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>

#include "doctor/check.h"

namespace rdmacheck::doctor {
namespace {

// Kernel modules that make up the RDMA stack, in the order worth reporting.
constexpr const char* kRdmaModules[] = {
    "ib_core", "ib_uverbs", "rdma_cm",        "rdma_ucm", "mlx5_ib", "mlx4_ib",  "irdma", "bnxt_re",
    "qedr",    "efa",       "hns_roce_hw_v2", "erdma",    "mana_ib", "rdma_rxe", "siw"};

// A NIC's Ethernet driver -> the RDMA driver that pairs with it.
const std::map<std::string, std::string>& rdma_driver_for() {
  static const std::map<std::string, std::string> m = {
      {"mlx5_core", "mlx5_ib"}, {"mlx4_core", "mlx4_ib"},   {"ice", "irdma"},
      {"i40e", "irdma"},        {"bnxt_en", "bnxt_re"},     {"qede", "qedr"},
      {"efa", "efa"},           {"hns3", "hns_roce_hw_v2"}, {"erdma", "erdma"},
      {"mana", "mana_ib"}};
  return m;
}

// The rdma-core provider (libNAME-rdmavNN.so) a device needs, by its driver.
std::string provider_for(const DeviceInfo& d) {
  static const std::map<std::string, std::string> m = {
      {"mlx5_core", "mlx5"}, {"mlx4_core", "mlx4"},
      {"rxe", "rxe"},        {"siw", "siw"},
      {"ice", "irdma"},      {"i40e", "irdma"},
      {"irdma", "irdma"},    {"bnxt_en", "bnxt_re"},
      {"qede", "qedr"},      {"efa", "efa"},
      {"hns3", "hns"},       {"erdma", "erdma"},
      {"mana", "mana"},      {"vmw_pvrdma", "vmw_pvrdma"}};
  auto it = m.find(d.driver);
  return it == m.end() ? std::string() : it->second;
}

constexpr const char* kProviderDirs[] = {"/usr/lib/x86_64-linux-gnu/libibverbs",
                                         "/usr/lib/aarch64-linux-gnu/libibverbs",
                                         "/usr/lib64/libibverbs", "/usr/lib/libibverbs"};

// The provider libraries installed, and the directory they were found in.
std::pair<std::string, std::vector<std::string>> providers(const FsRoot& fs) {
  for (const char* dir : kProviderDirs) {
    auto names = fs.list(dir);
    if (!names.empty()) return {dir, names};
  }
  return {};
}

std::vector<std::string> loaded_modules(const FsRoot& fs) {
  std::vector<std::string> out;
  for (const char* m : kRdmaModules) {
    if (fs.exists(std::string("/sys/module/") + m)) out.push_back(m);
  }
  return out;
}

struct PciNic {
  std::string address, vendor, device, driver, wants;
};

// PCI network controllers and, for those an RDMA driver pairs with, which one.
std::vector<PciNic> pci_nics(const FsRoot& fs) {
  std::vector<PciNic> out;
  for (const auto& addr : fs.list("/sys/bus/pci/devices")) {
    const std::string dir = "/sys/bus/pci/devices/" + addr;
    const std::string cls = fs.read_line(dir + "/class").value_or("");
    // 0x02xxxx network controller (Ethernet 0x0200, InfiniBand 0x0207).
    if (cls.rfind("0x02", 0) != 0) continue;
    PciNic n{addr, fs.read_line(dir + "/vendor").value_or(""),
             fs.read_line(dir + "/device").value_or(""),
             fs.link_target(dir + "/driver").value_or(""), ""};
    if (auto it = rdma_driver_for().find(n.driver); it != rdma_driver_for().end()) {
      n.wants = it->second;
    } else if (n.vendor == "0x15b3") {
      n.wants = "mlx5_ib";  // Mellanox/NVIDIA without its Ethernet driver bound
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Netdevs that are up (not lo): where a Soft-RoCE device could go.
std::vector<std::string> up_netdevs(const FsRoot& fs) {
  std::vector<std::string> out;
  for (const auto& n : fs.list("/sys/class/net")) {
    if (n == "lo") continue;
    if (fs.read_line("/sys/class/net/" + n + "/operstate").value_or("") == "up") out.push_back(n);
  }
  return out;
}

// Each NIC as evidence: not an RDMA NIC, or one whose RDMA driver is or
// is not loaded. Returns the drivers to load.
std::vector<std::string> nic_evidence(const FsRoot& fs, const std::vector<PciNic>& nics,
                                      Finding& f) {
  std::vector<std::string> wanted;
  for (const auto& n : nics) {
    if (n.wants.empty()) {
      f.evidence.push_back(fmt::format("NIC {} (vendor {} device {}, driver {}) is not an RDMA NIC",
                                       n.address, n.vendor, n.device,
                                       n.driver.empty() ? "none" : n.driver));
    } else {
      const bool loaded = fs.exists("/sys/module/" + n.wants);
      f.evidence.push_back(
          fmt::format("NIC {} (vendor {} device {}, driver {}) can do RDMA with "
                      "{}, which is {}",
                      n.address, n.vendor, n.device, n.driver.empty() ? "none" : n.driver, n.wants,
                      loaded ? "loaded" : "not loaded"));
      if (!loaded) wanted.push_back(n.wants);
    }
  }
  return wanted;
}

CheckResult explain_absence(const FsRoot& fs) {
  CheckResult c{.check = "rdma-devices", .layer = Layer::kDevice, .subject = "host"};
  const std::string release = fs.read_line("/proc/sys/kernel/osrelease").value_or("");
  const bool class_dir = fs.exists("/sys/class/infiniband");
  const auto modules = loaded_modules(fs);
  const bool core = std::find(modules.begin(), modules.end(), "ib_core") != modules.end();
  const std::string moddir = "/lib/modules/" + release;
  const bool has_moddir = !release.empty() && fs.exists(moddir);
  const bool ships_rdma = has_moddir && fs.exists(moddir + "/kernel/drivers/infiniband");
  const bool ships_rxe = has_moddir && fs.exists(moddir + "/kernel/drivers/infiniband/sw/rxe");
  const auto nics = pci_nics(fs);
  const auto [provider_dir, libs] = providers(fs);
  c.fact("kernel", release);
  c.fact("sysfs_class", class_dir ? "/sys/class/infiniband (empty)" : "absent");
  c.fact("rdma_modules_loaded", modules);
  c.fact("rdma_modules_shipped", has_moddir ? nlohmann::json(ships_rdma) : nlohmann::json());
  c.fact("provider_libraries", libs.size());

  auto& f = c.add(Severity::kFail, FindingId::kNoRdmaDevice,
                  "no RDMA device: /sys/class/infiniband " +
                      std::string(class_dir ? "is empty" : "does not exist"));
  f.evidence.push_back(core ? "ib_core (the kernel's RDMA core) is loaded; loaded RDMA modules: " +
                                  join(modules)
                            : "ib_core is not loaded (/sys/module/ib_core absent): the kernel's "
                              "RDMA core is not running");
  if (!has_moddir) {
    f.evidence.push_back(
        fmt::format("the running kernel {} has no module tree ({} absent), so no "
                    "RDMA driver can be loaded into it",
                    release.empty() ? "?" : release, moddir));
  } else if (!ships_rdma && !core) {
    f.evidence.push_back(
        fmt::format("{}/kernel/drivers/infiniband is absent: kernel {} ships no "
                    "RDMA modules",
                    moddir, release));
  }
  const std::vector<std::string> wanted = nic_evidence(fs, nics, f);
  if (nics.empty()) f.evidence.push_back("no PCI network controller (class 0x02xxxx) found");
  if (libs.empty()) {
    f.evidence.push_back("no rdma-core provider libraries (libibverbs/lib*-rdmav*.so) found");
  } else {
    f.evidence.push_back(
        fmt::format("rdma-core user space is installed: {} provider libraries in {}", libs.size(),
                    provider_dir));
  }

  std::vector<std::string> fix;
  if (!wanted.empty()) {
    fix.push_back("load the RDMA driver of the NIC: modprobe " + join(wanted, " ") +
                  " (and ib_uverbs rdma_ucm)");
  }
  if (!has_moddir || (!ships_rdma && !core)) {
    fix.push_back(
        "boot a kernel with RDMA support (CONFIG_INFINIBAND; Debian's linux-image-amd64 "
        "has it, with rdma_rxe for Soft-RoCE)");
  }
  if (wanted.empty()) {
    // modprobe only where the running kernel ships the module: without a
    // module tree (or without rxe in it) it cannot load, whatever is typed.
    const auto up = up_netdevs(fs);
    const std::string netdev = up.empty() ? "eth0" : up.front();
    if (ships_rxe) {
      fix.push_back(fmt::format(
          "without an RDMA NIC, use Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe "
          "netdev {}",
          netdev));
    } else {
      fix.push_back(fmt::format(
          "without an RDMA NIC, Soft-RoCE needs a kernel that ships rdma_rxe (this one does "
          "not); on it: rdma link add rxe0 type rxe netdev {}",
          netdev));
    }
  }
  if (libs.empty())
    fix.push_back("install rdma-core user space: apt install rdma-core ibverbs-providers");
  f.fix = join(fix, "; ");
  return c;
}

CheckResult userspace(const FsRoot& fs, const DeviceInfo& d,
                      const std::pair<std::string, std::vector<std::string>>& libs,
                      const std::vector<std::string>& uverbs_of) {
  CheckResult c{.check = "userspace", .layer = Layer::kDevice, .subject = d.name};
  c.fact("driver", d.driver.empty() ? nlohmann::json() : nlohmann::json(d.driver));
  const bool has_uverbs = std::find(uverbs_of.begin(), uverbs_of.end(), d.name) != uverbs_of.end();
  c.fact("uverbs", has_uverbs);
  if (!has_uverbs) {
    auto& f = c.add(Severity::kFail, FindingId::kUverbsMissing,
                    d.name + " has no uverbs device: user space (libibverbs) cannot open it");
    f.evidence.push_back(fs.exists("/sys/module/ib_uverbs")
                             ? "no /sys/class/infiniband_verbs/uverbs*/ibdev names " + d.name
                             : "ib_uverbs is not loaded (/sys/module/ib_uverbs absent)");
    f.fix = "modprobe ib_uverbs";
  }
  const std::string provider = provider_for(d);
  if (provider.empty() || libs.second.empty()) {
    c.fact("provider", nullptr);
    return c;
  }
  const std::string prefix = "lib" + provider + "-rdmav";
  const auto it = std::find_if(libs.second.begin(), libs.second.end(),
                               [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
  c.fact("provider",
         it == libs.second.end() ? nlohmann::json() : nlohmann::json(libs.first + "/" + *it));
  if (it == libs.second.end()) {
    auto& f =
        c.add(Severity::kFail, FindingId::kProviderLibraryMissing,
              fmt::format("no rdma-core provider for {} (driver {}): libibverbs will not list it",
                          d.name, d.driver));
    f.evidence.push_back(fmt::format("{} has no {}*.so", libs.first, prefix));
    f.fix = "apt install ibverbs-providers (Debian/Ubuntu) or dnf install libibverbs (RHEL)";
  }
  return c;
}

}  // namespace

std::optional<Finding> no_rdma_device(const FsRoot& fs) {
  if (!read_rdma_devices(fs).empty()) return std::nullopt;
  return explain_absence(fs).findings.front();
}

bool is_software(const DeviceInfo& d) { return d.driver == "rxe" || d.driver == "siw"; }

std::vector<CheckResult> check_presence(const Machine& m) {
  if (m.devices.empty()) return {explain_absence(m.fs)};
  const auto libs = providers(m.fs);
  std::vector<std::string> uverbs_of;
  for (const auto& u : m.fs.list("/sys/class/infiniband_verbs")) {
    if (u.rfind("uverbs", 0) != 0) continue;
    if (auto dev = m.fs.read_line("/sys/class/infiniband_verbs/" + u + "/ibdev")) {
      uverbs_of.push_back(*dev);
    }
  }
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) out.push_back(userspace(m.fs, d, libs, uverbs_of));
  return out;
}

}  // namespace rdmacheck::doctor
