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
#include "lab/qmp.h"  // and lab/wire.h
#include "lab/ssh.h"
#include "lab/vm.h"
#include "lab/vmlinux.h"
#include "proto/key_ring.h"
#include "sysfs/fs_root.h"

namespace rdmacheck::lab {
namespace {

namespace fs = std::filesystem;
using Seconds = std::chrono::duration<double>;

const std::string kMarker = "rdmacheck-lab: up ";

struct Guest {
  GuestPlan plan;
  std::unique_ptr<Vm> vm;
  std::string partial;              // console bytes not yet ending in '\n'
  std::vector<std::string> hidden;  // console lines before our script spoke (firmware, kernel)
  bool script_started = false;
  Clock::time_point started_at;
  std::optional<double> boot_s;
  bool finished = false;  // wrote exit (runners) or failed
  std::optional<int> exit;
  std::string failed;
};

Status write_file(const fs::path& p, const std::string& text, fs::perms perms = fs::perms::none) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) return errno_error("open", p.string());
  out << text;
  out.close();
  if (!out) return errno_error("write", p.string());
  if (perms != fs::perms::none) {
    std::error_code ec;
    fs::permissions(p, perms, ec);
  }
  return ok_status();
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// Kernel messages ("[    8.898864] sysrq: Power Off") and firmware noise.
bool is_kernel_line(const std::string& l) {
  return l.size() > 2 && l[0] == '[' &&
         (l[1] == ' ' || std::isdigit(static_cast<unsigned char>(l[1])));
}

std::string clean(const std::string& raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c == 0x1b) {  // ANSI escape: skip to its final byte
      ++i;
      if (i < raw.size() && raw[i] == '[') {
        while (i + 1 < raw.size() && !std::isalpha(static_cast<unsigned char>(raw[i + 1]))) ++i;
        ++i;
      }
      continue;
    }
    if (c == '\r' || (c < 0x20 && c != '\t')) continue;
    out.push_back(static_cast<char>(c));
  }
  return out;
}

class Lab {
 public:
  Lab(const LabOptions& o, const TicketHeader& ticket, const std::atomic<bool>& stop)
      : o_(o), ticket_(ticket), stop_(stop), out_(o.json ? stderr : stdout) {}
  int run();

 private:
  Status prepare(const std::vector<GuestPlan>& plan, const Kernel& k);
  Status ssh_files(const std::vector<GuestPlan>& plan);
  void pump(Guest& g);
  void print_line(Guest& g, const std::string& line);
  void poll_files(Guest& g);
  int finish(int status, const std::string& why);
  void collect_wire();
  Status start_hub(const std::vector<GuestPlan>& plan);
  void notice_run_began();
  std::vector<WireCounters> wire_counters();
  nlohmann::json result_json(int status, const std::string& why);

  const LabOptions& o_;
  const TicketHeader& ticket_;
  const std::atomic<bool>& stop_;
  std::FILE* out_;
  fs::path dir_;
  std::string boot_image_;  // the unpacked vmlinux in dir_, or the bzImage itself
  bool made_dir_ = false;
  std::unique_ptr<Hub> hub_;
  std::vector<WirePort> ports_;  // the hub's ports, in its order
  std::vector<Guest> guests_;
  std::vector<WireCounters> wire_;  // read once, before the hub stops
  bool run_began_ = false;          // every guest has started its run commands
  Fd control_;                      // rdmacheck lab fault (lab/control.h)
};

// Keys, sshd_config, known_hosts and the MPI hostfile (lab/ssh.h), and
// rdmacheck-mesh beside the guests' rdmacheck when it was built.
Status Lab::ssh_files(const std::vector<GuestPlan>& plan) {
  if (auto s = make_ssh_keys(dir_); !s) return s;
  const fs::path d = dir_ / kSshDir;
  auto pub = read_text(d / "host_ed25519.pub");
  if (!pub) return errno_error("open", (d / "host_ed25519.pub").string());
  if (auto s = write_file(d / "known_hosts", known_hosts(plan, *pub)); !s) return s;
  if (auto s = write_file(d / "sshd_config", sshd_config()); !s) return s;
  if (auto s = write_file(dir_ / kHostfile, mpi_hostfile(plan)); !s) return s;
  std::error_code ec;
  const fs::path mesh = fs::read_symlink("/proc/self/exe", ec).parent_path() / "rdmacheck-mesh";
  if (!ec && fs::exists(mesh)) {
    fs::copy_file(mesh, dir_ / "bin" / "rdmacheck-mesh", fs::copy_options::overwrite_existing, ec);
    if (ec) return code_error("copy", ec.value(), mesh.string());
  }
  return ok_status();
}

Status Lab::prepare(const std::vector<GuestPlan>& plan, const Kernel& k) {
  std::error_code ec;
  if (o_.workdir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "rdmacheck-lab-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return errno_error("mkdtemp", tmpl);
    dir_ = tmpl;
    made_dir_ = true;
  } else {
    dir_ = fs::absolute(o_.workdir);
    fs::create_directories(dir_, ec);
    if (ec) return code_error("mkdir", ec.value(), dir_.string());
  }
  fs::create_directories(dir_ / "bin", ec);
  // The guests run this very binary, copied so it is reachable whatever its path.
  fs::copy_file("/proc/self/exe", dir_ / "bin" / "rdmacheck", fs::copy_options::overwrite_existing,
                ec);
  if (ec) return code_error("copy", ec.value(), "/proc/self/exe");
  if (auto s = write_initramfs((dir_ / "initrd.cpio").string(), k, "/bin/busybox"); !s) return s;
  boot_image_ = k.image;
  auto image = FsRoot::live().read(k.image);
  if (!image) return image.error();
  if (auto vmlinux = unpack_vmlinux(*image); !vmlinux) {
    std::fprintf(out_, "lab: booting the compressed %s (slower under TCG): %s\n", k.image.c_str(),
                 vmlinux.error().message().c_str());
  } else {
    if (auto s = write_file(dir_ / "vmlinux", *vmlinux); !s) return s;
    boot_image_ = (dir_ / "vmlinux").string();
  }
  if (auto s = write_file(dir_ / "hosts", hosts_file(plan)); !s) return s;
  if (std::any_of(plan.begin(), plan.end(), [](const GuestPlan& g) { return g.ssh; })) {
    if (auto s = ssh_files(plan); !s) return s;
  }
  // A fresh key per boot (a one-line ring: TLS 1.3, identity "lab"), owner-only.
  if (auto s = write_file(dir_ / kLabKeyFile, "", fs::perms::owner_read | fs::perms::owner_write);
      !s) {
    return s;
  }
  if (auto s = write_file(dir_ / kLabKeyFile, proto::ring_line("lab", proto::fresh_key())); !s)
    return s;
  for (const auto& g : plan) {
    const fs::path gd = dir_ / g.name;
    fs::remove_all(gd, ec);
    fs::create_directories(gd, ec);
    if (ec) return code_error("mkdir", ec.value(), gd.string());
    if (auto s = write_file(gd / "init.sh", guest_script(g, plan), fs::perms::owner_all); !s)
      return s;
    for (size_t i = 0; i < g.setup.size(); ++i) {
      if (auto s = write_file(gd / fmt::format("setup.{}.sh", i + 1), g.setup[i] + "\n"); !s)
        return s;
    }
    for (size_t i = 0; i < g.run.size(); ++i) {
      if (auto s = write_file(gd / fmt::format("run.{}.sh", i + 1), g.run[i] + "\n"); !s) return s;
    }
  }
  return ok_status();
}

void Lab::print_line(Guest& g, const std::string& raw) {
  const std::string line = clean(raw);
  if (!g.script_started) {
    // Everything up to our script's first line is firmware and kernel
    // chatter; the marker line itself may carry an unterminated firmware line.
    if (line.find(kMarker + g.plan.name) != std::string::npos) {
      g.script_started = true;
      return;
    }
    g.hidden.push_back(line);
    if (g.hidden.size() > 50) g.hidden.erase(g.hidden.begin());
    if (!o_.verbose) return;
  }
  if (!o_.verbose && (is_kernel_line(line) || line.empty())) return;
  std::fprintf(out_, "%s| %s\n", g.plan.name.c_str(), line.c_str());
  std::fflush(out_);
}

void Lab::pump(Guest& g) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(g.vm->console_fd(), buf, sizeof buf);
    if (n <= 0) break;
    g.partial.append(buf, static_cast<size_t>(n));
    size_t nl = 0;
    while ((nl = g.partial.find('\n')) != std::string::npos) {
      print_line(g, g.partial.substr(0, nl));
      g.partial.erase(0, nl + 1);
    }
  }
}

void Lab::poll_files(Guest& g) {
  const fs::path gd = dir_ / g.plan.name;
  if (!g.boot_s) {
    if (auto b = read_text(gd / "booted"); b && b->find('\n') != std::string::npos) {
      g.boot_s = Seconds(Clock::now() - g.started_at).count();
      std::fprintf(out_, "lab: %s booted in %.1f s (guest uptime %s s)\n", g.plan.name.c_str(),
                   *g.boot_s, trim(*b).c_str());
      std::fflush(out_);
    }
  }
  if (g.finished) return;
  // A guest writes each of these files with one echo, but the host can look
  // between the file's creation and the write: only a line ending in '\n' counts.
  const auto complete = [](const std::optional<std::string>& t) {
    return t && !t->empty() && t->back() == '\n';
  };
  if (auto f = read_text(gd / "failed"); complete(f)) {
    g.failed = trim(*f);
    g.finished = true;
  } else if (!g.plan.run.empty()) {
    if (auto e = read_text(gd / "exit"); complete(e)) {
      g.exit = std::atoi(e->c_str());
      g.finished = true;
    }
  }
}

nlohmann::json Lab::result_json(int status, const std::string& why) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& g : guests_) {
    const fs::path gd = dir_ / g.plan.name;
    nlohmann::json runs = nlohmann::json::array();
    for (size_t i = 0; i < g.plan.run.size(); ++i) {
      const auto out = read_text(gd / fmt::format("out.{}", i + 1));
      const auto rc = read_text(gd / fmt::format("rc.{}", i + 1));
      nlohmann::json parsed = out ? nlohmann::json::parse(*out, nullptr, false) : nlohmann::json();
      runs.push_back(
          {{"command", g.plan.run[i]},
           {"exit_status", rc ? nlohmann::json(std::atoi(rc->c_str())) : nlohmann::json()},
           {"output", parsed.is_discarded() ? nlohmann::json(out.value_or("")) : parsed}});
    }
    nlohmann::json nics = nlohmann::json::array();
    for (const auto& n : g.plan.nics) {
      nics.push_back({{"wire", n.wire},
                      {"netdev", n.netdev},
                      {"device", n.device},
                      {"address", n.address},
                      {"name", n.name}});
    }
    hosts.push_back({{"name", g.plan.name},
                     {"address", g.plan.address},
                     {"nics", nics},
                     {"boot_s", g.boot_s ? nlohmann::json(*g.boot_s) : nlohmann::json()},
                     {"setup", g.plan.setup},
                     {"serve", g.plan.serve},
                     {"failed", g.failed},
                     {"runs", runs}});
  }
  nlohmann::json wire = nlohmann::json::array();
  for (const auto& w : wire_) wire.push_back(to_json(w));
  return result_document(status, why, std::move(hosts), std::move(wire), ticket_);
}

// Asks every guest for its own counters and waits a little for them: netem
// drops inside the guest, which the hub never sees.
void Lab::collect_wire() {
  (void)write_file(dir_ / "collect", "\n");
  const Deadline d = deadline_in(std::chrono::seconds(5));
  while (Clock::now() < d) {
    const bool all = std::all_of(guests_.begin(), guests_.end(), [&](const Guest& g) {
      return fs::exists(dir_ / g.plan.name / "wire.done");
    });
    if (all) return;
    std::vector<pollfd> fds;
    for (auto& g : guests_) fds.push_back(pollfd{g.vm->console_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), 100);
    for (auto& g : guests_) pump(g);
  }
}

std::vector<WireCounters> Lab::wire_counters() {
  std::vector<WireCounters> out;
  if (!hub_) return out;
  for (size_t i = 0; i < ports_.size(); ++i) {
    WireCounters w;
    w.host = ports_[i].host;
    w.wire = ports_[i].nic.wire;
    w.netdev = ports_[i].nic.netdev;
    w.hub_from = hub_->frames_from(i);
    w.hub_dropped_to = hub_->dropped_to(i);
    w.hub_unheard_to = hub_->unheard_to(i);
    w.hub_max_queue = hub_->max_queue_to(i);
    const auto stall = hub_->longest_stall(i);
    w.stall_from_s = stall.from_s;
    w.stall_s = stall.seconds;
    const auto mute = hub_->longest_mute(i);
    w.mute = {mute.from_s, mute.seconds, mute.taken};
    const auto sw = hub_->switch_report(i);
    w.switch_faults = sw.ever;  // cleared ones too: their counters are in the report
    w.switch_in = sw.in;
    w.switch_out = sw.out;
    if (auto t = read_text(dir_ / w.host / ("wire." + w.netdev))) w.guest = parse_guest_wire(*t);
    out.push_back(std::move(w));
  }
  return out;
}

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

int Lab::run() {
  auto plan = make_plan(o_);
  if (!plan) {
    std::fprintf(stderr, "rdmacheck lab: %s\n", plan.error().message().c_str());
    return 2;
  }
  const std::string qemu = which("qemu-system-x86_64");
  if (qemu.empty()) {
    std::fprintf(stderr,
                 "rdmacheck lab: qemu-system-x86_64 not found: install 'qemu-system-x86'\n");
    return kLabFailed;
  }
  if (which("busybox").empty() && ::access("/bin/busybox", X_OK) != 0) {
    std::fprintf(stderr, "rdmacheck lab: /bin/busybox not found: install 'busybox-static'\n");
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

  for (size_t i = 0; i < plan->size(); ++i) {
    const GuestPlan& gp = (*plan)[i];
    VmSpec spec;
    spec.name = gp.name;
    spec.qemu = qemu;
    spec.accel = o_.accel;
    spec.memory_mb = o_.memory_mb;
    spec.kernel = boot_image_;
    spec.initrd = (dir_ / "initrd.cpio").string();
    spec.lab_dir = dir_.string();
    for (size_t p = 0; p < ports_.size(); ++p) {
      if (ports_[p].host != gp.name) continue;  // ports_ is in wire order: eth0 first
      spec.nics.push_back(VmNic{(dir_ / ports_[p].guest_socket).string(),
                                (dir_ / ports_[p].hub_socket).string(), ports_[p].nic.mac});
    }
    Guest g;
    g.plan = gp;
    g.started_at = Clock::now();
    auto vm = Vm::start(spec);
    if (!vm) return finish(kLabFailed, vm.error().message());
    g.vm = std::make_unique<Vm>(std::move(*vm));
    guests_.push_back(std::move(g));
  }

  const Deadline end = Clock::now() + o_.timeout;
  for (;;) {
    std::vector<pollfd> fds;
    for (auto& g : guests_) fds.push_back(pollfd{g.vm->console_fd(), POLLIN, 0});
    fds.push_back(pollfd{control_.get(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), 100);
    for (auto& g : guests_) {
      pump(g);
      poll_files(g);
    }
    notice_run_began();
    while (serve_control_once(control_, [&](const std::string& line) {
      std::string reply = control_reply(*hub_, ports_, o_.hosts, o_.nics, line);
      if (reply.rfind("ok: added", 0) == 0 || reply.rfind("ok: no switch faults now", 0) == 0) {
        std::fprintf(out_, "lab: %s (rdmacheck lab fault)\n", reply.substr(4).c_str());
        std::fflush(out_);
      }
      return reply;
    })) {
    }
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
    if (Clock::now() >= end) {
      std::string where;
      for (const auto& g : guests_) {
        const auto step = read_text(dir_ / g.plan.name / "step");
        where += fmt::format("{}{} at '{}'", where.empty() ? "" : ", ", g.plan.name,
                             step ? trim(*step) : std::string(g.boot_s ? "booted" : "boot"));
      }
      return finish(kLabFailed, fmt::format("deadline of {} s reached ({}); guests killed",
                                            o_.timeout.count(), where));
    }
  }
}

}  // namespace

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
