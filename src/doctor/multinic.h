// Hosts with several RDMA NICs: the ARP sysctls that decide which NIC
// answers for an address, read under an injected root, for the "multi-nic"
// check (multinic.cc; routes and rules are parsed by net/routes.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "net/routes.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::doctor {

// net.ipv4.conf.{all,DEV}.NAME as the kernel applies it: the larger of the
// two for arp_ignore and arp_announce (Documentation/networking/ip-sysctl.rst).
// nullopt when neither can be read under FS.
std::optional<int> effective_arp_sysctl(const FsRoot& fs, const std::string& dev,
                                        const std::string& name);

}  // namespace rdmacheck::doctor
