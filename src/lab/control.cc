#include "lab/control.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/deadline.h"
#include "lab/wire.h"

namespace rdmacheck::lab {
namespace fs = std::filesystem;
namespace {

Result<sockaddr_un> addr_of(const fs::path& p) { return unix_addr(p.string()); }

// Reads up to the first '\n' (at most 4 KiB) until DEADLINE.
Result<std::string> read_line(const Fd& fd, Deadline d, bool whole) {
  std::string got;
  char buf[4096];
  while (got.size() < sizeof buf) {
    pollfd p{fd.get(), POLLIN, 0};
    const int left = ms_left(d);
    if (left <= 0) return plain_error("lab control", "no answer in time");
    if (::poll(&p, 1, left) <= 0) continue;
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno_error("recv", "lab control");
    }
    if (n == 0) break;
    got.append(buf, static_cast<size_t>(n));
    if (!whole && got.find('\n') != std::string::npos) break;
  }
  if (!whole) got = got.substr(0, got.find('\n'));
  return got;
}

bool send_all(const Fd& fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd.get(), s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<Fd> listen_control(const fs::path& dir) {
  const fs::path p = dir / kControlSocket;
  auto a = addr_of(p);
  if (!a) return a.error();
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return errno_error("socket", "lab control");
  ::unlink(p.c_str());
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a) != 0) {
    return errno_error("bind", p.string());
  }
  if (::listen(fd.get(), 4) != 0) return errno_error("listen", p.string());
  return fd;
}

std::string control_reply(Hub& hub, const std::vector<WirePort>& ports, int hosts, int nics,
                          const std::string& line) {
  const std::string verb = line.substr(0, line.find(' '));
  const std::string arg = line.size() > verb.size() ? line.substr(verb.size() + 1) : "";
  if (verb == "add") {
    if (!is_switch_fault(arg)) {
      return fmt::format(
          "error: '{}': only a switch fault (switch-...) can be added to a "
          "running lab",
          arg);
    }
    auto f = parse_switch_fault(arg, hosts, nics);
    if (!f) return "error: " + f.error().message();
    for (size_t i = 0; i < ports.size(); ++i) {
      if (ports[i].host == f->host && ports[i].nic.wire == f->nic) {
        hub.add_fault(i, *f);
        return "ok: added " + f->spec;
      }
    }
    return fmt::format("error: {} has no NIC {}", f->host, f->nic);
  }
  if (verb == "clear" && arg.empty()) {
    hub.clear_faults();
    return "ok: no switch faults now (their counters stay)";
  }
  if (verb == "list" && arg.empty()) {
    std::string out = "ok";
    for (size_t i = 0; i < ports.size(); ++i) {
      const auto r = hub.switch_report(i);
      if (r.faults.empty()) continue;
      const std::string port = ports[i].nic.wire == 1
                                   ? ports[i].host
                                   : fmt::format("{}-{}", ports[i].host, ports[i].nic.wire);
      std::string faults;
      for (const auto& f : r.faults) faults += (faults.empty() ? "" : ", ") + f.spec;
      out += fmt::format("\n{}: {}; {}; {}", port, faults, format_switch("towards " + port, r.in),
                         format_switch("from " + port, r.out));
    }
    return out == "ok" ? "ok: no switch faults" : out;
  }
  return fmt::format("error: '{}': expected add SWITCH-FAULT, clear or list", line);
}

bool serve_control_once(const Fd& listener,
                        const std::function<std::string(const std::string&)>& reply) {
  Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!c.valid()) return false;
  auto line = read_line(c, deadline_in(std::chrono::seconds(1)), false);
  if (line) send_all(c, reply(*line) + "\n");
  return true;
}

Result<std::string> control_request(const fs::path& socket, const std::string& line) {
  auto a = addr_of(socket);
  if (!a) return a.error();
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return errno_error("socket", "lab control");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a) != 0) {
    return errno_error("connect", socket.string());
  }
  if (!send_all(fd, line + "\n")) return errno_error("send", socket.string());
  ::shutdown(fd.get(), SHUT_WR);
  auto r = read_line(fd, deadline_in(std::chrono::seconds(5)), true);
  if (!r) return r.error();
  std::string s = *r;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

Result<fs::path> find_lab_control(const std::string& workdir) {
  if (!workdir.empty()) {
    const fs::path p = fs::path(workdir) / kControlSocket;
    if (!fs::exists(p)) {
      return plain_error(
          "lab fault", fmt::format("no running lab in {} (no {})", workdir, p.filename().string()));
    }
    return p;
  }
  std::error_code ec;
  std::vector<fs::path> live;
  const fs::path tmp = fs::temp_directory_path(ec);
  for (const auto& e : fs::directory_iterator(tmp, ec)) {
    if (e.path().filename().string().rfind("rdmacheck-lab-", 0) != 0) continue;
    const fs::path p = e.path() / kControlSocket;
    if (!fs::exists(p, ec)) continue;
    // A socket left by a lab that died answers nothing: connect tells.
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    auto a = addr_of(p);
    if (fd.valid() && a && ::connect(fd.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a) == 0) {
      live.push_back(p);
    }
  }
  if (live.size() == 1) return live.front();
  if (live.empty()) {
    return plain_error("lab fault", fmt::format("no running lab found in {}: start one with "
                                                "'rdmacheck lab', or name its --workdir",
                                                tmp.string()));
  }
  std::string names;
  for (const auto& p : live) names += " " + p.parent_path().string();
  return plain_error("lab fault", fmt::format("{} labs are running; name one with --workdir:{}",
                                              live.size(), names));
}

}  // namespace rdmacheck::lab
