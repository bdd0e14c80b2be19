#include "sysfs/fs_root.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

namespace rdmacheck {

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return std::isspace(c) == 0; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

FsRoot FsRoot::from_option(const std::string& option) {
  if (!option.empty()) return FsRoot(option);
  if (const char* env = std::getenv("RDMACHECK_ROOT"); env != nullptr && *env != '\0') {
    return FsRoot(env);
  }
  return live();
}

FsRoot FsRoot::live() { return FsRoot("/"); }

std::filesystem::path FsRoot::host_path(const std::string& abs) const {
  std::string rel = abs;
  while (!rel.empty() && rel.front() == '/') rel.erase(rel.begin());
  return root_ / rel;
}

Result<std::string> FsRoot::read(const std::string& abs) const {
  seen(abs, FsObserver::Access::kRead);
  if (!injected()) return plain_error("fs", "no machine root was given for " + abs);
  const auto path = host_path(abs);
  std::ifstream in(path, std::ios::binary);
  if (!in) return errno_error("open", path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return errno_error("read", path.string());
  std::string s = ss.str();
  // Reading an attribute sysfs does not support (e.g. gid_attrs/types/N of an
  // empty GID slot) fails with EINVAL on read(), which ifstream reports as an
  // empty read with failbit; treat it as unreadable.
  if (s.empty() && in.fail() && !in.eof()) return errno_error("read", path.string());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::optional<std::string> FsRoot::read_line(const std::string& abs) const {
  auto r = read(abs);
  if (!r) return std::nullopt;
  std::string s = *r;
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return trim(s);
}

bool FsRoot::exists(const std::string& abs) const {
  seen(abs, FsObserver::Access::kExists);
  if (!injected()) return false;
  std::error_code ec;
  return std::filesystem::exists(host_path(abs), ec);
}

std::vector<std::string> FsRoot::list(const std::string& abs) const {
  seen(abs, FsObserver::Access::kList);
  std::vector<std::string> names;
  if (!injected()) return names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(host_path(abs), ec)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> FsRoot::link_target(const std::string& abs) const {
  seen(abs, FsObserver::Access::kLink);
  if (!injected()) return std::nullopt;
  std::error_code ec;
  auto target = std::filesystem::read_symlink(host_path(abs), ec);
  if (ec) return std::nullopt;
  return target.filename().string();
}

std::optional<std::string> FsRoot::resolve(const std::string& abs) const {
  seen(abs, FsObserver::Access::kLink);
  if (!injected()) return std::nullopt;
  std::error_code ec;
  const auto real = std::filesystem::canonical(host_path(abs), ec);
  if (ec) return std::nullopt;
  const auto base = std::filesystem::canonical(root_, ec);
  if (ec) return std::nullopt;
  const auto rel = real.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel == "." ? std::string("/") : "/" + rel.string();
}

}  // namespace rdmacheck
