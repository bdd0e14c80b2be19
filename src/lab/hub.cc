#include "lab/hub.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

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
                                        const std::vector<std::string>& guest_paths) {
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
  h->thread_ = std::thread([raw = h.get()] { raw->loop(); });
  return h;
}

Hub::~Hub() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Hub::loop() {
  std::vector<pollfd> fds;
  for (const auto& s : socks_) fds.push_back(pollfd{s.get(), POLLIN, 0});
  std::vector<sockaddr_un> dest;
  for (const auto& g : guests_) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, g.c_str(), g.size());
    dest.push_back(a);
  }
  std::vector<char> frame(65536 + 64);
  while (!stop_.load()) {
    if (::poll(fds.data(), fds.size(), 100) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      for (;;) {
        const ssize_t n = ::recv(socks_[i].get(), frame.data(), frame.size(), 0);
        if (n <= 0) break;
        frames_.fetch_add(1);
        for (size_t j = 0; j < dest.size(); ++j) {
          if (j == i) continue;
          // A guest that has not started (or has stopped) just misses the frame.
          (void)::sendto(socks_[j].get(), frame.data(), static_cast<size_t>(n), MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&dest[j]), sizeof dest[j]);
        }
      }
    }
  }
}

}  // namespace rdmacheck::lab
