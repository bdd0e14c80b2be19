#include "lab/qmp.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include "base/fd.h"
#include "lab/hub.h"  // unix_addr
#include "lab/vm.h"

namespace rdmacheck::lab {

namespace {

// "/machine/peripheral-anon/device[3]/virtio-backend" -> 3 (-1: none).
long device_index(const std::string& path) {
  const auto at = path.find("device[");
  return at == std::string::npos ? -1 : std::strtol(path.c_str() + at + 7, nullptr, 10);
}

// One QMP conversation: a line per message, events skipped.
class Qmp {
 public:
  Qmp(Fd fd, Deadline d) : fd_(std::move(fd)), deadline_(d) {}

  Result<nlohmann::json> next() {
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        auto doc = nlohmann::json::parse(buf_.substr(0, nl), nullptr, false);
        buf_.erase(0, nl + 1);
        if (doc.is_discarded() || !doc.is_object()) return plain_error("qmp", "not JSON");
        if (doc.contains("event")) continue;
        return doc;
      }
      pollfd p{fd_.get(), POLLIN, 0};
      const int r = ::poll(&p, 1, ms_left(deadline_));
      if (r == 0) return plain_error("qmp", "no answer before the deadline");
      if (r < 0) return errno_error("poll", "qmp");
      char chunk[4096];
      const ssize_t got = ::recv(fd_.get(), chunk, sizeof chunk, MSG_DONTWAIT);
      if (got == 0) return plain_error("qmp", "QEMU closed the connection");
      if (got < 0 && errno != EAGAIN && errno != EINTR) return errno_error("recv", "qmp");
      if (got > 0) buf_.append(chunk, static_cast<size_t>(got));
      if (buf_.size() > (1U << 20)) return plain_error("qmp", "a reply over 1 MiB");
    }
  }

  // The "return" of one command.
  Result<nlohmann::json> call(const std::string& command, const nlohmann::json& args = nullptr) {
    nlohmann::json m = {{"execute", command}};
    if (!args.is_null()) m["arguments"] = args;
    const std::string line = m.dump() + "\n";
    if (::send(fd_.get(), line.data(), line.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(line.size())) {
      return errno_error("send", "qmp " + command);
    }
    auto r = next();
    if (!r) return r.error();
    if (r->contains("error")) {
      return plain_error("qmp", fmt::format("{}: {}", command, (*r)["error"].dump()));
    }
    return (*r)["return"];
  }

 private:
  Fd fd_;
  Deadline deadline_;
  std::string buf_;
};

}  // namespace

std::vector<std::string> virtio_net_paths(const nlohmann::json& reply) {
  std::vector<std::string> paths;
  if (!reply.is_array()) return paths;
  for (const auto& d : reply) {
    if (d.is_object() && d.value("name", "") == "virtio-net" && d["path"].is_string()) {
      paths.push_back(d["path"].get<std::string>());
    }
  }
  std::sort(paths.begin(), paths.end(), [](const std::string& a, const std::string& b) {
    return device_index(a) < device_index(b);
  });
  return paths;
}

std::optional<VirtqStatus> parse_queue_status(const nlohmann::json& reply) {
  if (!reply.is_object()) return std::nullopt;
  for (const char* k : {"shadow-avail-idx", "last-avail-idx", "used-idx", "inuse"}) {
    if (!reply.contains(k) || !reply[k].is_number_unsigned()) return std::nullopt;
  }
  VirtqStatus s;
  s.avail = reply["shadow-avail-idx"].get<uint16_t>();
  s.last_avail = reply["last-avail-idx"].get<uint16_t>();
  s.used = reply["used-idx"].get<uint16_t>();
  s.inuse = reply["inuse"].get<uint32_t>();
  return s;
}

std::string avail_index_command(const nlohmann::json& reply) {
  if (!reply.is_object() || !reply.contains("vring-avail") ||
      !reply["vring-avail"].is_number_unsigned()) {
    return {};
  }
  return fmt::format("xp /1hx {:#x}", reply["vring-avail"].get<uint64_t>() + 2);
}

std::optional<uint16_t> parse_xp_u16(const std::string& hmp_reply) {
  const auto at = hmp_reply.find(": 0x");
  if (at == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const unsigned long v = std::strtoul(hmp_reply.c_str() + at + 4, &end, 16);
  if (end == hmp_reply.c_str() + at + 4 || v > 0xffff) return std::nullopt;
  return static_cast<uint16_t>(v);
}

Result<std::vector<NicQueues>> query_nic_queues(const std::string& path, Deadline deadline) {
  auto addr = unix_addr(path);
  if (!addr) return addr.error();
  // Non-blocking: a connect to a listener whose backlog is full fails at
  // once (EAGAIN) instead of waiting without a deadline.
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return errno_error("socket", "qmp");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
    return errno_error("connect", path);
  }
  Qmp q(std::move(fd), deadline);
  if (auto greeting = q.next(); !greeting) return greeting.error();
  if (auto caps = q.call("qmp_capabilities"); !caps) return caps.error();
  auto devices = q.call("x-query-virtio");
  if (!devices) return devices.error();
  std::vector<NicQueues> out;
  for (const auto& p : virtio_net_paths(*devices)) {
    NicQueues n;
    for (const int queue : {0, 1}) {  // virtio-net: receive 0, transmit 1 (one pair)
      auto r = q.call("x-query-virtio-queue-status", {{"path", p}, {"queue", queue}});
      if (!r) return r.error();
      auto s = parse_queue_status(*r);
      if (!s) return plain_error("qmp", "x-query-virtio-queue-status: unexpected reply");
      // What the guest posted, from its own ring: QEMU's copy is stale
      // exactly when QEMU stopped looking (seen 2026-12-07, bench/perf).
      if (const auto cmd = avail_index_command(*r); !cmd.empty()) {
        auto xp = q.call("human-monitor-command", {{"command-line", cmd}});
        if (!xp) return xp.error();
        if (const auto v = xp->is_string() ? parse_xp_u16(xp->get<std::string>()) : std::nullopt) {
          s->avail = *v;
        }
      }
      (queue == 0 ? n.rx : n.tx) = *s;
    }
    out.push_back(n);
  }
  return out;
}

namespace {

using ByHost = std::map<std::string, std::vector<NicQueues>>;

// One look at every host's transmit queues, over each host's QMP socket.
ByHost look(const std::vector<WireCounters>& wire, const std::string& lab_dir) {
  ByHost by_host;
  for (const auto& w : wire) {
    if (by_host.count(w.host)) continue;
    auto q =
        query_nic_queues(qmp_socket(lab_dir, w.host), deadline_in(std::chrono::milliseconds(1000)));
    by_host[w.host] = q ? std::move(*q) : std::vector<NicQueues>{};
  }
  return by_host;
}

std::optional<VirtqStatus> tx_of(const ByHost& by_host, const WireCounters& w) {
  const auto it = by_host.find(w.host);
  if (it == by_host.end() || w.wire < 1 || static_cast<size_t>(w.wire) > it->second.size()) {
    return std::nullopt;
  }
  return it->second[w.wire - 1].tx;
}

bool holds(const std::optional<VirtqStatus>& q) { return q && q->waiting() > 0; }

}  // namespace

void add_qemu_queues(std::vector<WireCounters>& wire, const std::string& lab_dir) {
  const ByHost first = look(wire, lab_dir);
  for (auto& w : wire) w.qemu_tx = tx_of(first, w);
  // Frames waiting at one look may be a QEMU about to take them; waiting at
  // two looks with nothing taken between is a QEMU that stopped looking.
  if (std::none_of(wire.begin(), wire.end(), [](const auto& w) { return holds(w.qemu_tx); })) {
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kHeldLookMs));
  const ByHost second = look(wire, lab_dir);
  for (auto& w : wire) {
    const auto later = tx_of(second, w);
    w.qemu_tx_held = holds(w.qemu_tx) && holds(later) && later->last_avail == w.qemu_tx->last_avail;
    if (later) w.qemu_tx = later;
  }
}

}  // namespace rdmacheck::lab
