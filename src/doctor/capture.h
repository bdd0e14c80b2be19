// `rdmacheck doctor --capture DIR`: a tree a bug report can carry. It holds
// exactly the files the checks read (observed through FsRoot, symbolic links
// recreated so paths resolve the same), and under DIR/capture/ the answers of
// the non-file sources, which replay_sources() reads back with --root DIR.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/result.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::doctor {

class PathRecorder : public FsObserver {
 public:
  void seen(const std::string& abs, Access how) override;
  [[nodiscard]] std::map<std::string, Access> paths() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Access> paths_;
};

// Copies each recorded machine path (read from "/") into dest. Returns how
// many files were written. Unset GID slots (all zero) are left out: the
// parser skips them either way.
Result<int> copy_recorded(const PathRecorder& rec, const std::filesystem::path& dest);

// An unset GID slot (all zero), which a capture leaves out.
bool unset_gid_slot(const std::string& abs, const std::string& content);

// dest/capture/NAME.json for each source answer, plus manifest.json.
Status write_capture_files(const std::filesystem::path& dest,
                           const std::map<std::string, nlohmann::json>& files);

// Fails unless dir does not exist or is an empty directory; creates it.
Status prepare_capture_dir(const std::filesystem::path& dir);

}  // namespace rdmacheck::doctor
