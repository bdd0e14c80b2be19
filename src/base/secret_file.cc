#include "base/secret_file.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

namespace rdmacheck {

bool is_systemd_credential(const std::string& file) {
  const char* dir = std::getenv("CREDENTIALS_DIRECTORY");
  if (dir == nullptr || *dir == '\0') return false;
  std::error_code ec;
  const auto d = std::filesystem::weakly_canonical(dir, ec);
  const auto f = std::filesystem::weakly_canonical(file, ec);
  if (ec) return false;
  return f.parent_path() == d;
}

std::string secret_file_problem(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return "";
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) == 0 || is_systemd_credential(file)) return "";
  return fmt::format("{} is accessible by group or others (mode {:04o}): chmod 600 {}", file,
                     st.st_mode & 07777, file);
}

}  // namespace rdmacheck
