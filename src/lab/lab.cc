#include "lab/lab.h"

#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/deadline.h"
#include "base/fd.h"
#include "host/ticket.h"
#include "lab/control.h"
#include "lab/hub.h"
#include "lab/initramfs.h"
#include "lab/kernel.h"
#include "lab/lab_run.h"
#include "lab/qmp.h"  // and lab/wire.h
#include "lab/vm.h"
#include "lab/vmlinux.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::lab {
namespace {

using Seconds = std::chrono::duration<double>;

// The emulator and the guests' busybox on this host; "" when all are there,
// else what to install.
std::string missing_tools(const std::string& qemu) {
  if (qemu.empty()) return "qemu-system-x86_64 not found: install 'qemu-system-x86'";
  if (which("busybox").empty() && ::access("/bin/busybox", X_OK) != 0) {
    return "/bin/busybox not found: install 'busybox-static'";
  }
  return {};
}

}  // namespace

// The hub with a port for every NIC, and the switch faults on their ports.
Status Lab::start_hub(const std::vector<GuestPlan>& plan) {
  static_assert(kMaxHosts * kMaxNics <= static_cast<int>(Hub::kPorts));
  auto faults = switch_faults(o_);
  if (!faults) return faults.error();
  ports_ = wire_ports(plan);
  std::vector<std::string> hub_paths;
  std::vector<std::string> guest_paths;
  std::vector<int> wires;
  for (const auto& p : ports_) {
    hub_paths.push_back((dir_ / p.hub_socket).string());
    guest_paths.push_back((dir_ / p.guest_socket).string());
    wires.push_back(p.nic.wire);
  }
  auto hub = Hub::start(hub_paths, guest_paths, wires, o_.seed);
  if (!hub) return hub.error();
  hub_ = std::move(*hub);
  for (const auto& f : *faults) {
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (ports_[i].host == f.host && ports_[i].nic.wire == f.nic) hub_->add_fault(i, f);
    }
    std::fprintf(out_, "lab: switch fault %s\n", f.spec.c_str());
  }
  return ok_status();
}

// Timed switch faults count from the moment every guest has started its
// run commands (each writes "started" just before).
void Lab::notice_run_began() {
  if (run_began_) return;
  for (const auto& g : guests_) {
    if (!fs::exists(dir_ / g.plan.name / "started")) return;
  }
  run_began_ = true;
  hub_->begin_run();
  if (!o_.fault_at.empty() || !o_.fault_until.empty()) {
    std::fprintf(out_, "lab: the run began: --fault-at and --fault-until count from now\n");
    std::fflush(out_);
  }
}

int Lab::finish(int status, const std::string& why) {
  wire_ = wire_counters();
  add_qemu_queues(wire_, dir_.string());  // before the guests stop
  for (auto& g : guests_) {
    if (g.vm) g.vm->stop(500);
  }
  hub_.reset();
  for (const auto& w : wire_) std::fprintf(out_, "%s\n", format_wire(w).c_str());
  if (!why.empty()) std::fprintf(stderr, "rdmacheck lab: %s\n", why.c_str());
  if (o_.json) std::printf("%s\n", result_json(status, why).dump(2).c_str());
  std::error_code ec;
  if (o_.keep) {
    std::fprintf(stderr, "rdmacheck lab: kept %s\n", dir_.c_str());
  } else if (made_dir_) {
    fs::remove_all(dir_, ec);
  }
  return status;
}

Status Lab::boot_guests(const std::vector<GuestPlan>& plan, const std::string& qemu) {
  for (const GuestPlan& gp : plan) {
    VmSpec spec;
    spec.name = gp.name;
    spec.qemu = qemu;
    spec.accel = o_.accel;
    spec.memory_mb = o_.memory_mb;
    spec.kernel = boot_image_;
    spec.initrd = (dir_ / "initrd.cpio").string();
    spec.lab_dir = dir_.string();
    for (const auto& port : ports_) {
      if (port.host != gp.name) continue;  // ports_ is in wire order: eth0 first
      spec.nics.push_back(VmNic{(dir_ / port.guest_socket).string(),
                                (dir_ / port.hub_socket).string(), port.nic.mac});
    }
    Guest g;
    g.plan = gp;
    g.started_at = Clock::now();
    auto vm = Vm::start(spec);
    if (!vm) return vm.error();
    g.vm = std::make_unique<Vm>(std::move(*vm));
    guests_.push_back(std::move(g));
  }
  return ok_status();
}

void Lab::serve_faults() {
  while (serve_control_once(control_, [&](const std::string& line) {
    std::string reply = control_reply(*hub_, ports_, o_.hosts, o_.nics, line);
    if (reply.rfind("ok: added", 0) == 0 || reply.rfind("ok: no switch faults now", 0) == 0) {
      std::fprintf(out_, "lab: %s (rdmacheck lab fault)\n", reply.substr(4).c_str());
      std::fflush(out_);
    }
    return reply;
  })) {
  }
}

// One turn of the watch: consoles, result files and fault requests read; the
// lab's exit status once it is over.
std::optional<int> Lab::watch_once(Deadline end) {
  std::vector<pollfd> fds;
  for (auto& g : guests_) fds.push_back(pollfd{g.vm->console_fd(), POLLIN, 0});
  fds.push_back(pollfd{control_.get(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), 100);
  for (auto& g : guests_) {
    pump(g);
    poll_files(g);
  }
  notice_run_began();
  serve_faults();
  for (auto& g : guests_) {
    if (!g.failed.empty()) {
      return finish(kLabFailed, fmt::format("{} failed: {}", g.plan.name, g.failed));
    }
  }
  const bool all_done = std::all_of(guests_.begin(), guests_.end(), [](const Guest& g) {
    return g.plan.run.empty() || g.finished;
  });
  if (all_done) {
    int worst = 0;
    for (const auto& g : guests_) worst = std::max(worst, g.exit.value_or(0));
    collect_wire();
    return finish(worst, "");
  }
  for (auto& g : guests_) {
    if (!g.vm->running() && !g.finished) {
      pump(g);
      std::string tail;
      for (const auto& l : g.hidden) tail += "\n  " + l;
      return finish(kLabFailed, fmt::format("{}'s QEMU exited (status {}) before its test "
                                            "finished; last console lines:{}",
                                            g.plan.name, g.vm->exit_status(), tail));
    }
  }
  if (stop_.load()) return finish(kLabFailed, "interrupted");
  if (Clock::now() < end) return std::nullopt;
  std::string where;
  for (const auto& g : guests_) {
    const auto step = read_text(dir_ / g.plan.name / "step");
    where += fmt::format("{}{} at '{}'", where.empty() ? "" : ", ", g.plan.name,
                         step ? trim(*step) : std::string(g.boot_s ? "booted" : "boot"));
  }
  return finish(kLabFailed, fmt::format("deadline of {} s reached ({}); guests killed",
                                        o_.timeout.count(), where));
}

int Lab::run() {
  auto plan = make_plan(o_);
  if (!plan) {
    std::fprintf(stderr, "rdmacheck lab: %s\n", plan.error().message().c_str());
    return 2;
  }
  const std::string qemu = which("qemu-system-x86_64");
  if (auto missing = missing_tools(qemu); !missing.empty()) {
    std::fprintf(stderr, "rdmacheck lab: %s\n", missing.c_str());
    return kLabFailed;
  }
  auto kernel = find_kernel(FsRoot::live(), o_.kernel);
  if (!kernel) {
    std::fprintf(stderr, "rdmacheck lab: %s\n", kernel.error().message().c_str());
    return kLabFailed;
  }
  if (auto s = prepare(*plan, *kernel); !s) return finish(kLabFailed, s.error().message());

  if (auto s = start_hub(*plan); !s) return finish(kLabFailed, s.error().message());
  auto control = listen_control(dir_);
  if (!control) return finish(kLabFailed, control.error().message());
  control_ = std::move(*control);

  std::string subnets;
  for (const auto& n : plan->front().nics) {
    subnets += fmt::format("{}198.18.{}.0/24", subnets.empty() ? "" : " and ", n.wire - 1);
  }
  std::fprintf(out_, "lab: %zu hosts on %s, kernel %s, %s, work dir %s\n", plan->size(),
               subnets.c_str(), kernel->version.c_str(),
               o_.accel == "kvm" ? "KVM" : "TCG emulation", dir_.c_str());
  if (auto s = boot_guests(*plan, qemu); !s) return finish(kLabFailed, s.error().message());
  const Deadline end = Clock::now() + o_.timeout;
  for (;;) {
    if (auto status = watch_once(end)) return *status;
  }
}

nlohmann::json result_document(int status, const std::string& why, nlohmann::json hosts,
                               nlohmann::json wire, const TicketHeader& ticket) {
  nlohmann::json doc = {
      {"command", "lab"}, {"error", why}, {"hosts", std::move(hosts)}, {"wire", std::move(wire)}};
  doc = with_ticket(std::move(doc), ticket);
  doc["exit_status"] = status;
  return doc;
}

int run_lab(const LabOptions& o, const TicketHeader& ticket, const std::atomic<bool>& stop) {
  Lab lab(o, ticket, stop);
  return lab.run();
}

}  // namespace rdmacheck::lab
