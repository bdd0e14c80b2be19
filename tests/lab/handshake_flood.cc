// Test-only: a handshake flood from many source addresses, for
// abuse_lab_test's network test (the attack that took every handshake slot
// of a server before slots were counted per network as well as per address).
// From each of N consecutive IPv4 addresses starting at FIRST (addresses of
// this host), it keeps PER connections to SERVER:PORT open and says nothing
// on them; each one the server ends (its handshake deadline, or "server
// busy") is opened again a second later (75 addresses: about 50 connections
// a second, the rate that kept every legitimate client out before). Once
// every connection has had its first answer it prints "flood: holding" (the
// server's slots are as full as this flood can make them). It runs until
// the file STOP exists (or 300 s), then prints one line:
//   "flood: OPENED connections, GREETED greeted, BUSY busy, from N addresses"
// Usage: handshake_flood SERVER PORT FIRST N PER STOP
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Conn {
  int fd = -1;
  in_addr source{};
  bool answered = false;
  std::chrono::steady_clock::time_point next_open{};
};

// A non-blocking connection from SOURCE, or -1.
int open_from(in_addr source, const sockaddr_in& server) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr = source;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0 ||
      (::connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) != 0 &&
       errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: handshake_flood SERVER PORT FIRST N PER STOP\n");
    return 2;
  }
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[2])));
  in_addr first{};
  if (::inet_pton(AF_INET, argv[1], &server.sin_addr) != 1 ||
      ::inet_pton(AF_INET, argv[3], &first) != 1) {
    std::fprintf(stderr, "handshake_flood: SERVER and FIRST are IPv4 addresses\n");
    return 2;
  }
  const int n = std::atoi(argv[4]);
  const int per = std::atoi(argv[5]);
  const std::string stop = argv[6];
  std::vector<Conn> conns;
  for (int i = 0; i < n; ++i) {
    in_addr a{};
    a.s_addr = htonl(ntohl(first.s_addr) + static_cast<uint32_t>(i));
    for (int k = 0; k < per; ++k) conns.push_back(Conn{-1, a, false});
  }
  long opened = 0, greeted = 0, busy = 0;
  bool holding = false;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  struct stat st {};
  while (std::chrono::steady_clock::now() < end && ::stat(stop.c_str(), &st) != 0) {
    std::vector<pollfd> p;
    for (auto& c : conns) {
      if (c.fd < 0 && std::chrono::steady_clock::now() >= c.next_open) {
        c.fd = open_from(c.source, server);
        c.answered = false;
        if (c.fd >= 0) ++opened;
      }
      p.push_back(pollfd{c.fd, POLLIN, 0});
    }
    if (::poll(p.data(), p.size(), 100) <= 0) continue;
    for (size_t i = 0; i < conns.size(); ++i) {
      if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Conn& c = conns[i];
      char buf[512];
      const ssize_t got = ::recv(c.fd, buf, sizeof buf, 0);
      if (got > 0) {
        // The first frame: the greeting (a handshake slot held) or a refusal.
        if (!c.answered) {
          const std::string text(buf, static_cast<size_t>(got));
          if (text.find("server busy") != std::string::npos)
            ++busy;
          else if (text.find("greeting") != std::string::npos)
            ++greeted;
          c.answered = true;
        }
        continue;
      }
      ::close(c.fd);  // ended by the server: open it again a second later
      c.fd = -1;
      c.next_open = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    if (!holding && greeted + busy >= static_cast<long>(conns.size())) {
      holding = true;
      std::printf("flood: holding\n");
      std::fflush(stdout);
    }
  }
  for (auto& c : conns) {
    if (c.fd >= 0) ::close(c.fd);
  }
  std::printf("flood: %ld connections, %ld greeted, %ld busy, from %d addresses\n", opened, greeted,
              busy, n);
  return 0;
}
