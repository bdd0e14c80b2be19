#include "lab/hub.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace rdmacheck::lab {
namespace {

Result<sockaddr_un> unix_addr(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    return plain_error("lab", fmt::format("socket path too long for AF_UNIX ({} bytes): {}; use a "
                                          "shorter --workdir",
                                          path.size(), path));
  }
  std::memcpy(a.sun_path, path.c_str(), path.size());
  return a;
}

}  // namespace

Result<std::unique_ptr<Hub>> Hub::start(const std::vector<std::string>& hub_paths,
                                        const std::vector<std::string>& guest_paths,
                                        const std::vector<int>& wires) {
  if (guest_paths.size() != hub_paths.size() ||
      (!wires.empty() && wires.size() != hub_paths.size())) {
    return plain_error("lab", "the hub needs a guest socket and a wire for each port");
  }
  std::unique_ptr<Hub> h(new Hub());
  for (const auto& p : hub_paths) {
    auto addr = unix_addr(p);
    if (!addr) return addr.error();
    Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return errno_error("socket");
    ::unlink(p.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
      return errno_error("bind", p);
    }
    h->socks_.push_back(std::move(fd));
  }
  for (const auto& g : guest_paths) {
    if (auto addr = unix_addr(g); !addr) return addr.error();
  }
  h->guests_ = guest_paths;
  h->wires_ = wires.empty() ? std::vector<int>(hub_paths.size(), 1) : wires;
  h->thread_ = std::thread([raw = h.get()] { raw->loop(); });
  return h;
}

Hub::~Hub() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

namespace {

// Frames a guest is not ready to take yet wait here, as in a switch's port
// buffer; beyond this many the hub drops them, as a switch would.
constexpr size_t kPortBuffer = 4096;

}  // namespace

// Each hub socket is connected to its guest once that guest's QEMU has bound
// its end, so poll() tells when the guest's queue has room (a unix datagram
// socket queues only a handful of frames: unqueued, a burst is lost).
void Hub::loop() {
  const size_t n = socks_.size();
  std::vector<bool> connected(n, false);
  std::vector<std::deque<std::string>> queued(n);
  std::vector<sockaddr_un> dest;
  for (const auto& g : guests_) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, g.c_str(), g.size());
    dest.push_back(a);
  }
  // Sends what waits for guest j; false when its queue is (still) full.
  auto flush = [&](size_t j) {
    while (!queued[j].empty()) {
      const std::string& f = queued[j].front();
      if (::send(socks_[j].get(), f.data(), f.size(), MSG_DONTWAIT) < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
        connected[j] = false;  // the guest went away: forget what waited for it
        queued[j].clear();
        return true;
      }
      queued[j].pop_front();
    }
    return true;
  };
  auto deliver = [&](size_t j, const char* data, size_t len) {
    if (!connected[j]) {
      connected[j] =
          ::connect(socks_[j].get(), reinterpret_cast<sockaddr*>(&dest[j]), sizeof dest[j]) == 0;
      if (!connected[j]) {  // not started yet: the frame is lost, as on a dead port
        if (j < kPorts) unheard_[j].fetch_add(1);
        return;
      }
    }
    if (queued[j].size() >= kPortBuffer) {
      dropped_.fetch_add(1);
      if (j < kPorts) to_dropped_[j].fetch_add(1);
      return;
    }
    queued[j].emplace_back(data, len);
    if (j < kPorts && queued[j].size() > max_queue_[j].load())
      max_queue_[j].store(queued[j].size());
    flush(j);
  };
  std::vector<char> frame(65536 + 64);
  std::vector<pollfd> fds(n);
  while (!stop_.load()) {
    for (size_t i = 0; i < n; ++i) {
      fds[i] = pollfd{socks_[i].get(),
                      static_cast<short>(POLLIN | (queued[i].empty() ? 0 : POLLOUT)), 0};
    }
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (size_t j = 0; j < n; ++j) {
      if ((fds[j].revents & POLLOUT) != 0) flush(j);
    }
    for (size_t i = 0; i < n; ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      for (int burst = 0; burst < 64; ++burst) {
        const ssize_t got = ::recv(socks_[i].get(), frame.data(), frame.size(), MSG_DONTWAIT);
        if (got <= 0) break;
        frames_.fetch_add(1);
        if (i < kPorts) from_[i].fetch_add(1);
        for (size_t j = 0; j < n; ++j) {
          if (j != i && wires_[j] == wires_[i]) deliver(j, frame.data(), static_cast<size_t>(got));
        }
      }
    }
  }
}

}  // namespace rdmacheck::lab
