#include "lab/initramfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace rdmacheck::lab {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const noexcept { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const noexcept { archive_entry_free(e); }
};

Status add(archive* a, const std::string& name, const std::string& data, int mode,
           bool dir = false) {
  std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
  archive_entry_set_pathname(e.get(), name.c_str());
  archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
  archive_entry_set_filetype(e.get(), dir ? AE_IFDIR : AE_IFREG);
  archive_entry_set_perm(e.get(), static_cast<mode_t>(mode));
  if (archive_write_header(a, e.get()) != ARCHIVE_OK) {
    return plain_error("archive_write_header",
                       fmt::format("{}: {}", name, archive_error_string(a)));
  }
  if (!data.empty() &&
      archive_write_data(a, data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
    return plain_error("archive_write_data", fmt::format("{}: {}", name, archive_error_string(a)));
  }
  return ok_status();
}

Result<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string initramfs_init_script() {
  std::string mods;
  for (const auto& m : boot_modules()) mods += (mods.empty() ? "" : " ") + m;
  return fmt::format(R"(#!/bin/busybox sh
# rdmacheck lab guest init: mount the host's / read-only over 9p and run this
# guest's script from the lab export.
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t devtmpfs dev /dev
for m in {}; do
  $B insmod /mods/$m.ko || echo "rdmacheck-lab: insmod $m failed"
done
if ! $B mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /newroot; then
  echo "rdmacheck-lab: cannot mount the host's root file system"; $B poweroff -f
fi
host=$($B sed -n 's/.*rdmacheck.host=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
$B mount -t tmpfs run /newroot/run
$B mkdir -p /newroot/run/lab
if ! $B mount -t 9p -o trans=virtio,version=9p2000.L lab /newroot/run/lab; then
  echo "rdmacheck-lab: cannot mount the lab export"; $B poweroff -f
fi
$B umount /proc
$B umount /dev
exec $B switch_root /newroot /bin/bash /run/lab/$host/init.sh
)",
                     mods);
}

Status write_initramfs(const std::string& path, const Kernel& k, const std::string& busybox) {
  auto bb = slurp(busybox);
  if (!bb) {
    return plain_error("lab", fmt::format("cannot read {} ({}): install 'busybox-static'", busybox,
                                          bb.error().message()));
  }
  std::unique_ptr<archive, ArchiveCloser> a(archive_write_new());
  archive_write_set_format_cpio_newc(a.get());
  if (archive_write_open_filename(a.get(), path.c_str()) != ARCHIVE_OK) {
    return plain_error("archive_write_open_filename",
                       fmt::format("{}: {}", path, archive_error_string(a.get())));
  }
  for (const char* dir : {"bin", "mods", "newroot", "proc", "sys", "dev"}) {
    if (auto s = add(a.get(), dir, "", 0755, true); !s) return s;
  }
  if (auto s = add(a.get(), "init", initramfs_init_script(), 0755); !s) return s;
  if (auto s = add(a.get(), "bin/busybox", *bb, 0755); !s) return s;
  for (size_t i = 0; i < k.boot_module_paths.size(); ++i) {
    auto ko = slurp(k.boot_module_paths[i]);
    if (!ko) return ko.error();
    if (auto s = add(a.get(), "mods/" + boot_modules()[i] + ".ko", *ko, 0644); !s) return s;
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return plain_error("archive_write_close", archive_error_string(a.get()));
  }
  return ok_status();
}

}  // namespace rdmacheck::lab
