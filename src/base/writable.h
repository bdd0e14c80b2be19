// Whether a report file could be written, asked before any work so that a
// typo in a path never costs a whole run. One check for every command that
// writes a file (cli's FILE validator, rdmacheck-mesh's --html).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace rdmacheck {

// "" when FILE's directory exists and a file can be created in it; else why not.
inline std::string writable_file_problem(const std::string& file) {
  const std::filesystem::path p(file);
  if (p.filename().empty()) return "'" + file + "' names a directory, not a file";
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return "directory '" + dir.string() + "' does not exist";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in directory '" + dir.string() + "'";
  }
  if (std::filesystem::is_directory(p, ec)) return "'" + file + "' is a directory";
  return {};
}

}  // namespace rdmacheck
