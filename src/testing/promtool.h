// Prometheus's own checker over an exposition: `promtool check metrics`, from
// Debian's prometheus package (scripts/setup --tests installs it; CMake finds
// it and defines RDMACHECK_PROMTOOL). Test-only.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace rdmacheck::test_util {

struct PromtoolCheck {
  bool ok = false;
  std::string output;  // what promtool printed: empty when its lint found nothing
};

inline PromtoolCheck promtool_check_metrics(const std::string& promtool,
                                            const std::string& exposition) {
  const auto dir = make_temp_dir("promtool");
  const auto file = dir / "metrics.prom";
  std::ofstream(file) << exposition;
  const std::string cmd = promtool + " check metrics < " + file.string() + " 2>&1";
  PromtoolCheck c;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return c;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) c.output.append(buf, n);
  const int st = ::pclose(p);
  std::filesystem::remove_all(dir);
  c.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  return c;
}

}  // namespace rdmacheck::test_util
