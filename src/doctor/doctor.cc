#include "doctor/doctor.h"

namespace rdmacheck::doctor {

std::vector<Finding> DoctorReport::findings() const {
  std::vector<Finding> out;
  for (const auto& c : checks) {
    for (auto f : c.findings) {
      f.subject = c.subject;
      out.push_back(std::move(f));
    }
  }
  return out;
}

const std::vector<CheckEntry>& check_table() {
  static const std::vector<CheckEntry> t = {
      {"rdma-devices", check_presence},
      {"port-state", check_ports},
      {"gid-table", check_gids},
      {"netdev", check_netdevs},
      {"memlock", check_memlock},
      {"firewall", check_firewall},
      {"mtu", check_mtu},
      {"pcie", check_pcie},
      {"numa", check_numa},
      {"cpu", check_cpu},
      {"lossless", check_lossless},
      {"counters", check_counters},
      {"multi-nic", check_multi_nic},
  };
  return t;
}

DoctorReport run_doctor(const FsRoot& fs, Sources& src) {
  DoctorReport r;
  r.root = fs.root().string();
  r.hostname = fs.read_line("/proc/sys/kernel/hostname").value_or("");
  r.kernel = fs.read_line("/proc/sys/kernel/osrelease").value_or("");
  const Machine m{fs, src, read_rdma_devices(fs)};
  for (const auto& c : check_table()) {
    auto results = c.run(m);
    r.checks.insert(r.checks.end(), std::make_move_iterator(results.begin()),
                    std::make_move_iterator(results.end()));
  }
  return r;
}

}  // namespace rdmacheck::doctor
