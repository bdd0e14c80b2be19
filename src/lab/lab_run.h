// One `rdmacheck lab` run: the class that boots the guests, pumps their
// consoles and collects their results (lab.cc drives it; lab_files.cc
// prepares the run directory, lab_console.cc reads what the guests say).
// Internal to lab/.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "host/ticket.h"
#include "lab/hub.h"
#include "lab/kernel.h"
#include "lab/lab.h"
#include "lab/plan.h"
#include "lab/vm.h"
#include "lab/wire.h"

namespace rdmacheck::lab {

namespace fs = std::filesystem;

inline const std::string kMarker = "rdmacheck-lab: up ";

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

// FILE's text written (PERMS when given), or why not.
Status write_file(const fs::path& p, const std::string& text, fs::perms perms = fs::perms::none);
// FILE's text, or nullopt when it cannot be read.
std::optional<std::string> read_text(const fs::path& p);
// Kernel messages ("[    8.898864] sysrq: Power Off") and firmware noise.
bool is_kernel_line(const std::string& l);
// RAW without ANSI escapes and control characters (tabs kept).
std::string clean(const std::string& raw);

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
  Status boot_guests(const std::vector<GuestPlan>& plan, const std::string& qemu);
  void serve_faults();
  std::optional<int> watch_once(Deadline end);
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

}  // namespace rdmacheck::lab
