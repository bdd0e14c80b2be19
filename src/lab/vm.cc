#include "lab/vm.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "base/spawn.h"

namespace rdmacheck::lab {

std::string which(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : std::string();
  }
  const char* path = std::getenv("PATH");
  std::istringstream in(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(in, dir, ':');) {
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string qmp_socket(const std::string& lab_dir, const std::string& name) {
  return lab_dir + "/" + name + ".qmp";
}

std::vector<std::string> qemu_args(const VmSpec& s) {
  std::vector<std::string> a = {
      s.qemu,
      "-name",
      s.name,
      "-accel",
      s.accel == "kvm" ? "kvm" : "tcg,thread=multi",
      // Under TCG a plain x86-64 CPU: with "max" (AVX2, PCID, LA57, ...)
      // the same two-guest workload took 84 s instead of 61 (devices 2.7 s
      // vs 1.9, bw -n 2000 24 s vs 13): glibc and the guest kernel pick
      // the vector and paging paths TCG emulates slowest (docs/lab.md).
      "-cpu",
      s.accel == "kvm" ? "host" : "qemu64",
      "-m",
      std::to_string(s.memory_mb),
      "-smp",
      "1",
      "-nographic",
      "-no-reboot",
      "-nodefaults",
      "-serial",
      "stdio",
      "-kernel",
      s.kernel,
      "-initrd",
      s.initrd,
      // quiet + loglevel keep the kernel's boot chatter off the console; panic=-1 powers off.
      "-append",
      fmt::format("console=ttyS0 quiet loglevel=3 panic=-1 rdmacheck.host={}", s.name),
      "-virtfs",
      "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap",
      "-virtfs",
      fmt::format("local,path={},mount_tag=lab,security_model=none", s.lab_dir),
      // A QMP socket per guest (docs/lab.md): with --keep, what QEMU holds
      // of a guest's NIC can be read while it runs (x-query-virtio-queue-status).
      "-qmp",
      fmt::format("unix:{},server=on,wait=off", qmp_socket(s.lab_dir, s.name)),
  };
  for (size_t i = 0; i < s.nics.size(); ++i) {
    const VmNic& n = s.nics[i];
    a.insert(a.end(),
             {"-netdev",
              fmt::format("dgram,id=n{},local.type=unix,local.path={},remote.type=unix,"
                          "remote.path={}",
                          i, n.wire_local, n.wire_remote),
              // No iPXE option ROM: the guests boot a kernel, never the network.
              "-device", fmt::format("virtio-net-pci,netdev=n{},mac={},romfile=", i, n.mac)});
  }
  return a;
}

Result<Vm> Vm::start(const VmSpec& s) {
  // Its own process group, so a Ctrl-C on the terminal reaches rdmacheck,
  // which then stops the guests in order.
  auto child =
      spawn_piped(qemu_args(s), SpawnOptions{.stderr_to_pipe = true, .own_process_group = true});
  if (!child) return child.error();
  const Fd& rd = child->out;
  ::fcntl(rd.get(), F_SETFL, ::fcntl(rd.get(), F_GETFL) | O_NONBLOCK);
  return Vm(child->pid, std::move(child->out));
}

Vm::Vm(Vm&& o) noexcept : pid_(o.pid_), console_(std::move(o.console_)), status_(o.status_) {
  o.pid_ = -1;
}

Vm::~Vm() { stop(0); }

bool Vm::running() {
  if (pid_ < 0) return false;
  int st = 0;
  const pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  pid_ = -1;
  return false;
}

void Vm::stop(int grace_ms) {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  for (int waited = 0; waited < grace_ms && running(); waited += 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (pid_ >= 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    status_ = 128 + SIGKILL;
    pid_ = -1;
  }
}

}  // namespace rdmacheck::lab
