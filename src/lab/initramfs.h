// The lab's initramfs: busybox-static, the modules that mount the host's root
// file system over 9p, and an /init that switch_roots into it and runs the
// host's script from the lab export. Built by the project, no mkinitramfs.
#pragma once

#include <string>

#include "base/result.h"
#include "lab/kernel.h"

namespace rdmacheck::lab {

// The /init script (pure; tested). Guests learn their name from the kernel
// command line (rdmacheck.host=h1) and run /run/lab/<name>/init.sh.
std::string initramfs_init_script();

// Writes a newc cpio archive with /init, /bin/busybox and /mods/*.ko.
Status write_initramfs(const std::string& path, const Kernel& k, const std::string& busybox);

}  // namespace rdmacheck::lab
