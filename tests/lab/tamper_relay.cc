// Test-only: a TCP relay that changes one byte of a session after its TLS
// handshake, for auth_lab_test's tamper test (what a proxy that rewrites
// bytes, a NIC corrupting TCP, or an attacker on the path does). It accepts
// on LISTEN_PORT, connects to TARGET:PORT (an `rdmacheck serve`) and forwards
// both ways, unit by unit: from the server first the greeting (one frame in
// clear: a 4-byte length, then JSON), then TLS records; from the client TLS
// records from its first byte.
//
// The first application-data record (type 23) each side sends after the
// ClientHello closes the handshake (the client's Finished; the server's
// EncryptedExtensions and Finished), so:
//   to-server: flips a byte inside the client's second application-data
//              record, its first frame (the hello);
//   to-client: flips a byte inside the first application-data record the
//              server sends after that frame was forwarded (its answer).
// The byte is in the record's encrypted payload, never its 5-byte header.
// Connections are served one after another (a client that retries gets a
// fresh one) until one was changed and both of its ends closed, or 120 s.
// Prints what it changed and the bytes it forwarded each way.
// Usage: tamper_relay LISTEN_PORT TARGET_IP TARGET_PORT to-server|to-client
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

struct Direction {
  bool frame_first = false;  // the server's greeting precedes its records
  std::string pending;       // bytes read and not yet forwarded as a whole unit
  int app_records = 0;       // application-data records forwarded
  long long bytes = 0;
  bool closed = false;
};

// The length of the first whole unit in D.pending, or 0 while it is incomplete.
size_t next_unit(const Direction& d) {
  const std::string& p = d.pending;
  if (d.frame_first) {
    if (p.size() < 4) return 0;
    uint32_t len = 0;
    std::memcpy(&len, p.data(), 4);
    const size_t n = 4 + ntohl(len);
    return p.size() >= n ? n : 0;
  }
  if (p.size() < 5) return 0;
  const size_t n = 5 + ((static_cast<unsigned char>(p[3]) << 8) | static_cast<unsigned char>(p[4]));
  return p.size() >= n ? n : 0;
}

bool send_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// One relayed connection; true once a byte was changed in it.
bool relay(int client, int server, bool to_server, Clock::time_point end) {
  Direction c2s;
  Direction s2c;
  s2c.frame_first = true;
  bool flipped = false;
  bool armed = false;  // to-client: the client's first frame went to the server
  while (Clock::now() < end && !(c2s.closed && s2c.closed)) {
    pollfd p[2] = {{client, c2s.closed ? short(0) : short(POLLIN), 0},
                   {server, s2c.closed ? short(0) : short(POLLIN), 0}};
    if (::poll(p, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Direction& d = i == 0 ? c2s : s2c;
      const int to = i == 0 ? server : client;
      char buf[65536];
      const ssize_t n = ::recv(p[i].fd, buf, sizeof buf, 0);
      if (n <= 0) {
        // Forward what is left as it is, then pass the close on.
        send_all(to, d.pending.data(), d.pending.size());
        d.pending.clear();
        d.closed = true;
        ::shutdown(to, SHUT_WR);
        continue;
      }
      d.pending.append(buf, static_cast<size_t>(n));
      while (const size_t unit = next_unit(d)) {
        std::string u = d.pending.substr(0, unit);
        d.pending.erase(0, unit);
        const bool was_frame = d.frame_first;
        d.frame_first = false;
        if (!was_frame && u[0] == 23) {
          ++d.app_records;
          const bool hit =
              !flipped && unit > 6 &&
              ((to_server && i == 0 && d.app_records == 2) || (!to_server && i == 1 && armed));
          if (hit) {
            const size_t at = 5 + (unit - 5) / 2;
            u[at] = static_cast<char>(u[at] ^ 0x01);
            flipped = true;
            std::printf(
                "relay: flipped byte %zu of the %s's application-data record %d (%zu bytes)\n", at,
                i == 0 ? "client" : "server", d.app_records, unit);
            std::fflush(stdout);
          }
          if (i == 0 && d.app_records == 2) armed = true;
        }
        d.bytes += static_cast<long long>(unit);
        if (!send_all(to, u.data(), u.size())) d.closed = true;
      }
    }
  }
  std::printf("relay: %lld bytes client->server, %lld bytes server->client\n", c2s.bytes,
              s2c.bytes);
  std::fflush(stdout);
  return flipped;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 ||
      (std::strcmp(argv[4], "to-server") != 0 && std::strcmp(argv[4], "to-client") != 0)) {
    std::fprintf(stderr,
                 "usage: tamper_relay LISTEN_PORT TARGET_IP TARGET_PORT to-server|to-client\n");
    return 2;
  }
  const bool to_server = std::strcmp(argv[4], "to-server") == 0;
  sockaddr_in listen_at{};
  listen_at.sin_family = AF_INET;
  listen_at.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[1])));
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[3])));
  if (::inet_pton(AF_INET, argv[2], &target.sin_addr) != 1) {
    std::fprintf(stderr, "tamper_relay: %s is not an IPv4 address\n", argv[2]);
    return 2;
  }
  const int ls = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(ls, reinterpret_cast<sockaddr*>(&listen_at), sizeof listen_at) != 0 ||
      ::listen(ls, 4) != 0) {
    std::perror("tamper_relay: bind/listen");
    return 1;
  }
  std::printf("relay: listening on %s\n", argv[1]);
  std::fflush(stdout);
  const auto end = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < end) {
    pollfd p{ls, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int client = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
      std::perror("tamper_relay: connect");
      ::close(client);
      ::close(server);
      return 1;
    }
    const bool flipped = relay(client, server, to_server, end);
    ::close(client);
    ::close(server);
    if (flipped) return 0;
  }
  std::printf("relay: nothing changed before the deadline\n");
  return 1;
}
