// All reading of the machine (sysfs, procfs) goes through an FsRoot, rooted at
// "/" in production and at a captured or documented fixture tree in tests
// (--root DIR or RDMACHECK_ROOT), as rdma-core's SYSFS_PATH does.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace rdmacheck {

// Told about every machine path an FsRoot looks at, so `doctor --capture`
// can copy exactly the files the checks read.
class FsObserver {
 public:
  enum class Access { kRead, kList, kExists, kLink };
  virtual ~FsObserver() = default;
  virtual void seen(const std::string& abs, Access how) = 0;
};

class FsRoot {
 public:
  // No default: whoever holds an FsRoot says which machine it reads (the
  // build fails on `FsRoot fs;`). An options struct that is filled in after
  // it is made starts from none(), so forgetting to inject reads nothing,
  // never the live machine.
  FsRoot() = delete;
  explicit FsRoot(std::filesystem::path root) : root_(std::move(root)) {}
  // No machine at all: every read fails and nothing exists.
  static FsRoot none() { return FsRoot(std::filesystem::path()); }
  // This machine: "/".
  static FsRoot live();
  // The root named by --root, else $RDMACHECK_ROOT, else the live machine.
  static FsRoot from_option(const std::string& option);

  // Reads this machine (so its tools may be run and its state changed), not a capture.
  [[nodiscard]] bool is_live() const { return root_ == "/"; }
  // Was given a root (live or a capture).
  [[nodiscard]] bool injected() const { return !root_.empty(); }

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  // The host path of an absolute machine path ("/sys/class/net" -> ROOT/sys/class/net).
  [[nodiscard]] std::filesystem::path host_path(const std::string& abs) const;

  // Whole file, trailing newline removed. Errors carry the errno (sysfs
  // attributes that exist but are not applicable fail with EINVAL on read).
  [[nodiscard]] Result<std::string> read(const std::string& abs) const;
  // The first line, trimmed, or nullopt when unreadable.
  [[nodiscard]] std::optional<std::string> read_line(const std::string& abs) const;
  [[nodiscard]] bool exists(const std::string& abs) const;
  // Names in a directory, sorted; empty when it does not exist.
  [[nodiscard]] std::vector<std::string> list(const std::string& abs) const;
  // Target of a symbolic link's last component ("../../devices/pci0000:00/..." -> "0000:00:03.0").
  [[nodiscard]] std::optional<std::string> link_target(const std::string& abs) const;
  // The machine path after following every symbolic link ("/sys/class/infiniband/mlx5_0/device"
  // -> "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"); nullopt when it does not exist or
  // leads outside the root.
  [[nodiscard]] std::optional<std::string> resolve(const std::string& abs) const;

  // Every later access through this FsRoot (and its copies) is reported to observer.
  void observe(std::shared_ptr<FsObserver> observer) { observer_ = std::move(observer); }

 private:
  void seen(const std::string& abs, FsObserver::Access how) const {
    if (observer_) observer_->seen(abs, how);
  }
  std::filesystem::path root_;
  std::shared_ptr<FsObserver> observer_;
};

std::string trim(std::string s);

}  // namespace rdmacheck
