// The lab's wire: every guest's NIC is a unix datagram socket; the hub
// receives each frame on the guest's hub socket and forwards it to all other
// guests, like an Ethernet hub. No IP traffic leaves the machine.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck::lab {

class Hub {
 public:
  // hub_paths[i] is bound here; guest_paths[i] is where guest i listens.
  static Result<std::unique_ptr<Hub>> start(const std::vector<std::string>& hub_paths,
                                            const std::vector<std::string>& guest_paths);
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;
  ~Hub();
  [[nodiscard]] uint64_t frames() const { return frames_.load(); }
  // Frames dropped because a guest's port buffer was full.
  [[nodiscard]] uint64_t dropped() const { return dropped_.load(); }

 private:
  Hub() = default;
  void loop();
  std::vector<Fd> socks_;
  std::vector<std::string> guests_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace rdmacheck::lab
