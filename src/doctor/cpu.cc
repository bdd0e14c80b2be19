// CPU frequency governor and idle states: powersave and deep C-states add
// wake-up latency to every small RDMA message a polling thread waits for.
#include <fmt/core.h>

#include <cstdlib>
#include <map>

#include "doctor/check.h"

namespace rdmacheck::doctor {
namespace {

constexpr const char* kCpuDir = "/sys/devices/system/cpu";
// An idle state whose exit latency is above this is "deep" for RDMA latency work.
constexpr int kDeepCstateUs = 50;

bool is_cpu_dir(const std::string& name) {
  return name.size() > 3 && name.rfind("cpu", 0) == 0 &&
         name.find_first_not_of("0123456789", 3) == std::string::npos;
}

void check_idle(CheckResult& c, const FsRoot& fs) {
  const std::string dir = std::string(kCpuDir) + "/cpu0/cpuidle";
  nlohmann::json states = nlohmann::json::array();
  std::string deepest;
  int deepest_us = 0;
  for (const auto& s : fs.list(dir)) {
    if (s.rfind("state", 0) != 0) continue;
    const std::string sd = dir + "/" + s;
    const std::string name = fs.read_line(sd + "/name").value_or(s);
    const int latency = std::atoi(fs.read_line(sd + "/latency").value_or("0").c_str());
    const bool disabled = fs.read_line(sd + "/disable").value_or("0") == "1";
    states.push_back(fmt::format("{} {} us{}", name, latency, disabled ? " (disabled)" : ""));
    if (!disabled && latency > deepest_us) {
      deepest_us = latency;
      deepest = name;
    }
  }
  if (states.empty()) {
    c.fact("cstates", "not readable (no cpuidle in sysfs)");
    return;
  }
  c.fact("cstates", states);
  if (deepest_us > kDeepCstateUs) {
    auto& f = c.add(Severity::kInfo, FindingId::kDeepCstatesEnabled,
                    fmt::format("idle state {} (exit latency {} us) is enabled: an idle core "
                                "takes that long to wake for a completion",
                                deepest, deepest_us));
    std::string list;
    for (const auto& st : states) list += (list.empty() ? "" : ", ") + st.get<std::string>();
    f.evidence.push_back(
        fmt::format("{}/cpu0/cpuidle/state*/{{name,latency,disable}}: {}", kCpuDir, list));
    f.fix = fmt::format(
        "for latency tests: cpupower idle-set -D {} (or the kernel option "
        "intel_idle.max_cstate=1 / processor.max_cstate=1)",
        kDeepCstateUs);
  }
}

}  // namespace

std::vector<CheckResult> check_cpu(const Machine& m) {
  CheckResult c{.check = "cpu", .layer = Layer::kPerformance, .subject = "host"};
  std::map<std::string, std::vector<std::string>> by_governor;
  int cpus = 0;
  for (const auto& name : m.fs.list(kCpuDir)) {
    if (!is_cpu_dir(name)) continue;
    ++cpus;
    if (auto g = m.fs.read_line(std::string(kCpuDir) + "/" + name + "/cpufreq/scaling_governor")) {
      by_governor[*g].push_back(name);
    }
  }
  c.fact("cpus", cpus);
  const std::string driver =
      m.fs.read_line(std::string(kCpuDir) + "/cpu0/cpufreq/scaling_driver").value_or("");
  if (by_governor.empty()) {
    auto& f = c.add(Severity::kInfo, FindingId::kCpufreqNotExposed,
                    "no CPU frequency scaling in sysfs: the frequency is set by firmware or the "
                    "hypervisor, not by a governor here");
    f.evidence.push_back(std::string(kCpuDir) + "/cpu*/cpufreq/scaling_governor: absent");
  } else {
    nlohmann::json g = nlohmann::json::object();
    for (const auto& [gov, list] : by_governor) g[gov] = list.size();
    c.fact("governors", g);
    if (!driver.empty()) c.fact("scaling_driver", driver);
  }
  if (auto it = by_governor.find("powersave"); it != by_governor.end()) {
    auto& f = c.add(Severity::kWarn, FindingId::kCpuGovernorPowersave,
                    fmt::format("{} of {} CPUs run the powersave governor: small-message "
                                "latency suffers while cores clock down",
                                it->second.size(), cpus));
    f.evidence.push_back(fmt::format(
        "{}/{}/cpufreq/scaling_governor: powersave{}", kCpuDir, it->second.front(),
        it->second.size() > 1 ? fmt::format(" (and {} more)", it->second.size() - 1) : ""));
    if (driver == "intel_pstate" || driver == "amd-pstate-epp") {
      f.evidence.push_back("scaling_driver " + driver +
                           ": its powersave still ramps up under load, but late");
    }
    f.fix = "cpupower frequency-set -g performance (or tuned-adm profile network-latency)";
  }
  check_idle(c, m.fs);
  return {c};
}

}  // namespace rdmacheck::doctor
