#include <fmt/core.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "lab/lab_run.h"
#include "lab/qmp.h"

namespace rdmacheck::lab {

using Seconds = std::chrono::duration<double>;

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
    w.silent_s = hub_->silent_s(i);
    const auto sw = hub_->switch_report(i);
    w.switch_faults = sw.ever;  // cleared ones too: their counters are in the report
    w.switch_in = sw.in;
    w.switch_out = sw.out;
    if (auto t = read_text(dir_ / w.host / ("wire." + w.netdev))) w.guest = parse_guest_wire(*t);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace rdmacheck::lab
