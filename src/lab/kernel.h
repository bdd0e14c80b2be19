// Finding the kernel the lab boots: the newest /boot/vmlinuz-VERSION whose
// /lib/modules/VERSION has rdma_rxe and the modules the guest init needs.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::lab {

// Modules the initramfs loads, in this order, to mount the host's root over 9p.
const std::vector<std::string>& boot_modules();

struct Kernel {
  std::string version;                         // "6.1.0-57-amd64"
  std::string image;                           // "/boot/vmlinuz-6.1.0-57-amd64"
  std::string modules;                         // "/lib/modules/6.1.0-57-amd64"
  std::vector<std::string> boot_module_paths;  // absolute, in boot_modules() order
};

// Path of module NAME (".ko", ".ko.xz" or ".ko.zst") under dir, or "".
std::string find_module(const FsRoot& fs, const std::string& modules_dir, const std::string& name);

// The newest suitable kernel, or the one at `image` when given (--kernel).
Result<Kernel> find_kernel(const FsRoot& fs, const std::string& image = "");

}  // namespace rdmacheck::lab
