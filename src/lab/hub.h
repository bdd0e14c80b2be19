// The lab's wires: every guest's NIC is a unix datagram socket; the hub
// receives each frame on the NIC's hub socket and forwards it to every other
// NIC on the same wire, like an Ethernet hub. One hub (one thread) serves
// all the wires, so a second wire costs a port per host, not a process. No
// IP traffic leaves the machine. Each port can carry switch faults (one
// Shaper per direction): what the fabric between the hosts does to frames.
#pragma once

#include <sys/un.h>

#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "lab/shaper.h"

namespace rdmacheck::lab {

// The address of the unix socket at PATH; an error names a path too long
// for AF_UNIX (the lab's work directory is in every socket's path).
Result<sockaddr_un> unix_addr(const std::string& path);

class Hub {
 public:
  static constexpr size_t kPorts = 32;  // ports with their own counters
  // Port i: hub_paths[i] is bound here, guest_paths[i] is where that NIC's
  // QEMU listens, wires[i] the wire it is on (empty: all on one wire).
  // SEED makes the switch faults' random choices repeatable.
  static Result<std::unique_ptr<Hub>> start(const std::vector<std::string>& hub_paths,
                                            const std::vector<std::string>& guest_paths,
                                            const std::vector<int>& wires = {}, uint64_t seed = 1);
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;
  ~Hub();
  [[nodiscard]] uint64_t frames() const { return frames_.load(); }
  // Frames dropped because a guest's port buffer was full.
  [[nodiscard]] uint64_t dropped() const { return dropped_.load(); }
  // Per port i: frames it sent onto the wire, and frames for it the hub dropped.
  [[nodiscard]] uint64_t frames_from(size_t i) const { return i < kPorts ? from_[i].load() : 0; }
  [[nodiscard]] uint64_t dropped_to(size_t i) const {
    return i < kPorts ? to_dropped_[i].load() : 0;
  }
  // Frames for guest i before its QEMU was listening (boot-time chatter).
  [[nodiscard]] uint64_t unheard_to(size_t i) const { return i < kPorts ? unheard_[i].load() : 0; }
  // The deepest the hub's queue towards guest i got: queueing delay on the wire.
  [[nodiscard]] uint64_t max_queue_to(size_t i) const {
    return i < kPorts ? max_queue_[i].load() : 0;
  }
  // The longest time guest i's QEMU took no frame while frames waited for it and the guest sent
  // none either: a stalled guest (its emulator or kernel), which no network fault looks like —
  // a guest behind a loss or a firewall still takes what reaches it.
  struct Stall {
    double from_s = 0;   // seconds after the hub started
    double seconds = 0;  // 0: never
  };
  [[nodiscard]] Stall longest_stall(size_t i) const;
  // The longest time guest i sent nothing while its QEMU kept taking frames
  // from the hub (at least kMuteFrames of them): its transmit path stopped
  // (the guest kernel's queue, or its emulated NIC) while its receive path
  // and CPU ran on. A guest behind a loss or a flap still answers what it
  // gets (TCP, RoCE ACKs); one that drops all it receives (a firewall on it)
  // can look the same, so the lab says which hosts had faults of their own.
  struct Mute {
    double from_s = 0;   // seconds after the hub started
    double seconds = 0;  // 0: never
    uint64_t taken = 0;  // frames the guest took meanwhile
  };
  static constexpr uint64_t kMuteFrames = 200;
  [[nodiscard]] Mute longest_mute(size_t i) const;
  // Seconds since guest i last sent a frame onto the hub (since the hub
  // started, if it never did): with frames its QEMU holds untaken, a
  // transmit path that stopped although nothing came to it either.
  [[nodiscard]] double silent_s(size_t i) const;

  // Switch faults on port i (false: no such port). Faults with a time wait
  // for begin_run(); the others act at once.
  bool add_fault(size_t port, const SwitchFault& f);
  void clear_faults();
  // The moment the lab's run began: --fault-at/--fault-until count from it.
  void begin_run();
  struct PortFaults {
    std::vector<SwitchFault> faults;  // on either direction, now
    std::vector<std::string> ever;    // every fault the port has had (its spec), cleared or not
    ShaperCounters in;                // frames towards the port's host
    ShaperCounters out;               // frames from it
  };
  [[nodiscard]] PortFaults switch_report(size_t port) const;

 private:
  class Loop;  // the forwarding thread's state (lab/hub.cc)
  Hub() = default;
  void loop();
  [[nodiscard]] double now_s() const;
  [[nodiscard]] std::optional<double> run_s() const;
  std::vector<Fd> socks_;
  std::vector<std::string> guests_;
  std::vector<int> wires_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> frames_{0};
  std::atomic<uint64_t> dropped_{0};
  std::array<std::atomic<uint64_t>, kPorts> from_{};
  std::array<std::atomic<uint64_t>, kPorts> to_dropped_{};
  std::array<std::atomic<uint64_t>, kPorts> unheard_{};
  std::array<std::atomic<uint64_t>, kPorts> max_queue_{};
  std::array<std::atomic<double>, kPorts> last_from_s_{};  // now_s() of each port's last frame
  struct PortShapers {
    Shaper in;
    Shaper out;
  };
  mutable std::mutex mu_;  // guards shapers_ and run_began_
  std::vector<PortShapers> shapers_;
  std::vector<std::vector<std::string>> ever_;  // per port: PortFaults::ever
  std::optional<double> run_began_;             // now_s() at begin_run()
  std::vector<Stall> stalls_;                   // per port: longest_stall()
  std::vector<Mute> mutes_;                     // per port: longest_mute()
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::thread thread_;
};

}  // namespace rdmacheck::lab
