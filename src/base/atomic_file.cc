#include "base/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "base/fd.h"

namespace rdmacheck {

namespace {

Status write_atomically(const std::string& path, const std::string& content, bool secret) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string tmp = dir + "/." + p.filename().string() + ".XXXXXX";
  const Fd fd(::mkstemp(tmp.data()));
  if (fd.get() < 0) return errno_error("mkstemp", tmp);
  auto fail = [&](const char* call) {
    Error e = errno_error(call, tmp);
    ::unlink(tmp.c_str());
    return e;
  };
  // mkstemp makes the file 0600; a report is as readable as any other file we write.
  // A secret stays 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (!secret && ::fchmod(fd.get(), 0666 & ~mask) != 0) return fail("fchmod");
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("rename");
  return ok_status();
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& content) {
  return write_atomically(path, content, false);
}

Status write_secret_atomically(const std::string& path, const std::string& content) {
  return write_atomically(path, content, true);
}

}  // namespace rdmacheck
