#include "doctor/capture.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "doctor/sources.h"

namespace rdmacheck::doctor {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxLinks = 40;

bool is_virtual_fs(const std::string& abs) {
  return abs.rfind("/sys/", 0) == 0 || abs.rfind("/proc/", 0) == 0;
}

Status write_file(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) return errno_error("open", p.string());
  out << content;
  if (!out) return errno_error("write", p.string());
  return ok_status();
}

struct Copier {
  fs::path dest;
  int files = 0;

  // Walks abs from "/", recreating directories and links in dest, then copies the last component.
  Status copy(const std::string& abs, FsObserver::Access how, int hops = 0) {
    if (hops > kMaxLinks) return plain_error("capture", abs + ": too many symbolic links");
    fs::path cur = "/";
    const fs::path path = fs::path(abs).lexically_normal();
    std::vector<fs::path> parts(++path.begin(), path.end());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].empty()) continue;
      const fs::path next = cur / parts[i];
      struct stat st {};
      if (::lstat(next.c_str(), &st) != 0) return ok_status();  // absent: nothing to copy
      const fs::path mirror = dest / next.relative_path();
      if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        fs::path target = fs::read_symlink(next, ec);
        if (ec) return ok_status();
        const fs::path resolved = (target.is_absolute() ? target : cur / target).lexically_normal();
        // Absolute targets become relative, so the capture resolves inside itself.
        if (target.is_absolute()) target = resolved.lexically_relative(cur);
        if (!fs::is_symlink(mirror, ec)) {
          fs::create_directories(mirror.parent_path(), ec);
          fs::create_symlink(target, mirror, ec);
          if (ec) return code_error("symlink", ec.value(), mirror.string());
        }
        fs::path rest = resolved;
        for (size_t j = i + 1; j < parts.size(); ++j) rest /= parts[j];
        return copy(rest.string(), how, hops + 1);
      }
      if (S_ISDIR(st.st_mode)) {
        std::error_code ec;
        fs::create_directories(mirror, ec);
        if (ec) return code_error("mkdir", ec.value(), mirror.string());
        cur = next;
        continue;
      }
      if (i + 1 != parts.size()) return ok_status();            // a file in the middle of a path
      if (!S_ISREG(st.st_mode)) return write_file(mirror, "");  // a device node: presence only
      std::ifstream in(next, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      if (!in && !in.eof()) return ok_status();  // sysfs refused the read (EINVAL): leave it out
      const std::string content = ss.str();
      if (unset_gid_slot(abs, content)) return ok_status();
      ++files;
      return write_file(mirror, content);
    }
    // abs is a directory. Listing-only directories outside sysfs/procfs (the
    // provider libraries) keep their file names as empty placeholders.
    if (how == FsObserver::Access::kList && !is_virtual_fs(abs)) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(cur, ec)) {
        if (!e.is_regular_file(ec)) continue;
        const fs::path mirror = dest / e.path().relative_path();
        if (!fs::exists(mirror, ec)) {
          if (auto st = write_file(mirror, ""); !st) return st;
        }
      }
    }
    return ok_status();
  }
};

}  // namespace

bool unset_gid_slot(const std::string& abs, const std::string& content) {
  if (abs.find("/gids/") == std::string::npos) return false;
  for (char c : content) {
    if (c != '0' && c != ':' && c != '\n') return false;
  }
  return true;
}

void PathRecorder::seen(const std::string& abs, Access how) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = paths_.emplace(abs, how);
  if (!inserted && how == Access::kList) it->second = how;
}

std::map<std::string, FsObserver::Access> PathRecorder::paths() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paths_;
}

Result<int> copy_recorded(const PathRecorder& rec, const fs::path& dest) {
  Copier c{dest};
  for (const auto& [abs, how] : rec.paths()) {
    if (abs.empty() || abs.front() != '/') continue;
    if (auto st = c.copy(abs, how); !st) return st.error();
  }
  return c.files;
}

Status write_capture_files(const fs::path& dest,
                           const std::map<std::string, nlohmann::json>& files) {
  const fs::path dir = dest / fs::path(kCaptureDir).relative_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return code_error("mkdir", ec.value(), dir.string());
  for (const auto& [name, j] : files) {
    if (auto st = write_file(dir / (name + ".json"), j.dump(2) + "\n"); !st) return st;
  }
  return ok_status();
}

Status prepare_capture_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec))
      return plain_error("--capture", dir.string() + " is not a directory");
    if (!fs::is_empty(dir, ec)) {
      return plain_error("--capture",
                         dir.string() + " is not empty: give a new or empty directory");
    }
    return ok_status();
  }
  fs::create_directories(dir, ec);
  if (ec) return code_error("mkdir", ec.value(), dir.string());
  return ok_status();
}

}  // namespace rdmacheck::doctor
