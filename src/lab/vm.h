// One lab guest: a QEMU process under TCG with the host's root exported
// read-only over 9p, the lab directory exported writable, and a virtio NIC
// per unix-datagram wire. Its console (stdout+stderr) is a pipe we read.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace rdmacheck::lab {

// One virtio NIC on a unix-datagram wire; the guest names them eth0, eth1,
// ... in this order (PCI order).
struct VmNic {
  std::string wire_local;   // our end of the unix-datagram wire
  std::string wire_remote;  // the hub's end
  std::string mac;          // "52:54:00:12:34:01"
};

struct VmSpec {
  std::string name;  // "h1"
  std::string qemu = "qemu-system-x86_64";
  std::string accel = "tcg";
  int memory_mb = 768;
  std::string kernel;  // image
  std::string initrd;
  std::string lab_dir;  // exported writable as mount tag "lab"
  std::vector<VmNic> nics;
};

// A guest's QMP socket: LAB_DIR/NAME.qmp (the lab reads its NICs' virtio
// queues through it when it ends: lab/qmp.h).
std::string qmp_socket(const std::string& lab_dir, const std::string& name);

// The QEMU command line (pure; tested).
std::vector<std::string> qemu_args(const VmSpec& s);

class Vm {
 public:
  static Result<Vm> start(const VmSpec& s);
  Vm(Vm&& o) noexcept;
  Vm& operator=(Vm&&) = delete;
  Vm(const Vm&) = delete;
  ~Vm();
  [[nodiscard]] int console_fd() const { return console_.get(); }
  [[nodiscard]] pid_t pid() const { return pid_; }
  // True while the process lives; reaps it otherwise and records its status.
  bool running();
  // SIGTERM, then SIGKILL after grace_ms; always reaps.
  void stop(int grace_ms = 1000);
  [[nodiscard]] int exit_status() const { return status_; }

 private:
  Vm(pid_t pid, Fd console) : pid_(pid), console_(std::move(console)) {}
  pid_t pid_ = -1;
  Fd console_;
  int status_ = -1;
};

// Finds PROGRAM in PATH; empty when absent.
std::string which(const std::string& program);

}  // namespace rdmacheck::lab
