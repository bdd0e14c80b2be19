#include "lab/kernel.h"

#include <fmt/core.h>
#include <string.h>  // strverscmp

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace rdmacheck::lab {
namespace {

// Module paths by name from modules.dep ("kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko ...").
std::string from_modules_dep(const std::string& dep, const std::string& name) {
  std::istringstream in(dep);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string path = line.substr(0, colon);
    const std::string base = std::filesystem::path(path).filename().string();
    for (const char* ext : {".ko", ".ko.xz", ".ko.zst"}) {
      if (base == name + ext) return path;
    }
  }
  return {};
}

}  // namespace

const std::vector<std::string>& boot_modules() {
  static const std::vector<std::string> mods = {"virtio_ring",
                                                "virtio",
                                                "virtio_pci_legacy_dev",
                                                "virtio_pci_modern_dev",
                                                "virtio_pci",
                                                "netfs",
                                                "fscache",
                                                "9pnet",
                                                "9pnet_virtio",
                                                "9p"};
  return mods;
}

std::string find_module(const FsRoot& fs, const std::string& modules_dir, const std::string& name) {
  // Debian 12 kernels ship modules uncompressed; busybox insmod in the
  // initramfs takes only plain .ko, so compressed ones are reported by the caller.
  auto dep = fs.read(modules_dir + "/modules.dep");
  if (!dep) return {};
  const std::string rel = from_modules_dep(*dep, name);
  return rel.empty() ? std::string() : modules_dir + "/" + rel;
}

Result<Kernel> find_kernel(const FsRoot& fs, const std::string& image) {
  std::vector<std::string> versions;
  if (!image.empty()) {
    const std::string base = std::filesystem::path(image).filename().string();
    if (base.rfind("vmlinuz-", 0) != 0) {
      return plain_error("--kernel",
                         fmt::format("{}: expected a /boot/vmlinuz-VERSION image", image));
    }
    if (!fs.exists(image)) return code_error("--kernel", ENOENT, image);
    versions.push_back(base.substr(8));
  } else {
    for (const auto& e : fs.list("/boot")) {
      if (e.rfind("vmlinuz-", 0) == 0) versions.push_back(e.substr(8));
    }
    std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
      return strverscmp(a.c_str(), b.c_str()) > 0;  // newest first
    });
  }
  if (versions.empty()) {
    return plain_error("lab",
                       "no kernel in /boot: install one with 'apt-get install "
                       "linux-image-amd64' (it brings the rdma_rxe module)");
  }
  std::vector<std::string> rejected;
  for (const auto& v : versions) {
    Kernel k;
    k.version = v;
    k.image = image.empty() ? "/boot/vmlinuz-" + v : image;
    k.modules = "/lib/modules/" + v;
    if (find_module(fs, k.modules, "rdma_rxe").empty()) {
      rejected.push_back(fmt::format("{} (no rdma_rxe in {})", v, k.modules));
      continue;
    }
    std::string missing;
    for (const auto& m : boot_modules()) {
      const auto path = find_module(fs, k.modules, m);
      if (path.empty() || path.size() < 3 || path.compare(path.size() - 3, 3, ".ko") != 0) {
        missing += (missing.empty() ? "" : ", ") + m;
      }
      k.boot_module_paths.push_back(path);
    }
    if (!missing.empty()) {
      rejected.push_back(fmt::format("{} (missing or compressed: {})", v, missing));
      continue;
    }
    return k;
  }
  std::string why;
  for (const auto& r : rejected) why += (why.empty() ? "" : "; ") + r;
  return plain_error("lab", fmt::format("no kernel with Soft-RoCE found: {}. Install Debian's "
                                        "'linux-image-amd64'",
                                        why));
}

}  // namespace rdmacheck::lab
