// Whether a report file could be written, asked before any work so that a
// typo in a path never costs a whole run. One check for every command that
// writes a file (cli's FILE validator, rdmacheck-mesh's --html).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace rdmacheck {

// "" when FILE can be written; else why not. It is tried, not inferred from
// permission bits: root passes access(W_OK) everywhere, and /proc or /sys
// refuse new files whatever their modes say. An existing regular file is
// opened for writing without truncation; a missing one is created and removed
// again; a device or FIFO (/dev/stdout) is left to the write itself.
inline std::string writable_file_problem(const std::string& file) {
  const std::filesystem::path p(file);
  if (p.filename().empty()) return "'" + file + "' names a directory, not a file";
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return "directory '" + dir.string() + "' does not exist";
  }
  if (std::filesystem::is_directory(p, ec)) return "'" + file + "' is a directory";
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return {};
    const int fd = ::open(file.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return "cannot write '" + file + "': " + std::strerror(errno);
    ::close(fd);
    return {};
  }
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return "cannot create a file in directory '" + dir.string() + "': " + std::strerror(errno);
  }
  ::close(fd);
  ::unlink(file.c_str());
  return {};
}

}  // namespace rdmacheck
