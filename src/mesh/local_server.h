// Each rank's own `rdmacheck serve`, in process on an ephemeral TCP port and
// proving the run's key, so that its partners measure towards it while it
// measures towards them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "base/result.h"
#include "conn/target.h"
#include "proto/auth.h"

namespace rdmacheck::mesh {

class LocalServer {
 public:
  // Starts the server on the key ring KEY_FILE (TLS 1.3) and returns once it
  // listens (or failed to).
  static Result<std::unique_ptr<LocalServer>> start(const std::string& key_file,
                                                    const conn::DeviceChoice& dev,
                                                    std::chrono::milliseconds session_timeout);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;
  [[nodiscard]] uint16_t port() const { return port_; }

 private:
  LocalServer() = default;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::FILE* log_ = nullptr;
  std::thread thread_;
};

// Writes KEY (a key ring line) to a new owner-only file (mkstemp): the
// server's ring and every client's key file at once; removed by the caller.
Result<std::string> write_key_file(const std::string& key);

}  // namespace rdmacheck::mesh
