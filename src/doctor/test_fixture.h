// For the doctor tests: a Machine over a fixture tree under tests/fixtures,
// with the replayed sources of its capture/ directory.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "doctor/check.h"
#include "doctor/sources.h"

namespace rdmacheck::doctor::testing {

inline const std::string kFixtures = RDMACHECK_FIXTURES;

class Fixture {
 public:
  // name: a tree under tests/fixtures, or an absolute path (a ScratchCopy).
  explicit Fixture(const std::string& name)
      : fs_(name.front() == '/' ? name : kFixtures + "/" + name),
        src_(replay_sources(fs_)),
        m_{fs_, *src_, read_rdma_devices(fs_)} {}
  [[nodiscard]] const Machine& m() const { return m_; }
  [[nodiscard]] const FsRoot& fs() const { return fs_; }
  [[nodiscard]] Sources& src() const { return *src_; }

 private:
  FsRoot fs_;
  std::unique_ptr<Sources> src_;
  Machine m_;
};

inline std::vector<std::string> ids(const std::vector<CheckResult>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) {
    for (const auto& f : r.findings) out.emplace_back(id_name(f));
  }
  return out;
}

inline std::set<std::string> id_set(const std::vector<CheckResult>& rs) {
  const auto v = ids(rs);
  return {v.begin(), v.end()};
}

inline const Finding* find(const std::vector<CheckResult>& rs, FindingId id) {
  for (const auto& r : rs) {
    for (const auto& f : r.findings) {
      if (f.id == id) return &f;
    }
  }
  return nullptr;
}

inline std::string fact(const CheckResult& r, const std::string& key) {
  for (const auto& [k, v] : r.facts) {
    if (k == key) return v.is_string() ? v.get<std::string>() : v.dump();
  }
  return "<absent>";
}

// A scratch copy of a fixture (links kept) that a test may change.
class ScratchCopy {
 public:
  ScratchCopy(const std::string& fixture, const std::string& tag)
      : dir_(std::filesystem::temp_directory_path() / ("rdmacheck-test-" + tag)) {
    std::filesystem::remove_all(dir_);
    std::filesystem::copy(
        kFixtures + "/" + fixture, dir_,
        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  }
  ~ScratchCopy() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Overwrites (or creates) the machine path abs in the copy, following its links.
  void write(const std::string& abs, const std::string& content) const {
    const auto p = FsRoot(dir_).host_path(abs);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
  }
  void remove(const std::string& abs) const {
    std::filesystem::remove_all(FsRoot(dir_).host_path(abs));
  }
  [[nodiscard]] std::string name() const { return dir_.string(); }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace rdmacheck::doctor::testing
