// Tests only: a fresh directory of this run's own (mkdtemp), so that tests
// running at once (ctest -j, --repeat) never share one.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace rdmacheck::test_util {

inline std::filesystem::path make_temp_dir(const std::string& tag) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / ("rdmacheck-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl);
  return tmpl;
}

}  // namespace rdmacheck::test_util
