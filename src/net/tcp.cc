#include "net/tcp.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace rdmacheck {
namespace {

Status wait_fd(int fd, short events, Deadline d, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, ms_left(d));
    if (n > 0) return ok_status();
    if (n == 0) return code_error(what, ETIMEDOUT, "deadline reached");
    if (errno != EINTR) return errno_error("poll");
  }
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string format_sockaddr(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
  } else if (sa->sa_family == AF_INET6) {
    const auto* s6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
      inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, sizeof buf);
    } else {
      inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof buf);
    }
  }
  return buf;
}

Status io_all(int fd, char* buf, size_t len, bool writing, Deadline d) {
  size_t done = 0;
  while (done < len) {
    // MSG_DONTWAIT: the deadline holds even on a socket left in blocking mode.
    ssize_t n = writing ? ::send(fd, buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : ::recv(fd, buf + done, len - done, MSG_DONTWAIT);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0)
      return code_error(writing ? "send" : "recv", ECONNRESET, "peer closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return errno_error(writing ? "send" : "recv");
    if (auto s = wait_fd(fd, writing ? POLLOUT : POLLIN, d, writing ? "send" : "recv"); !s) {
      return s;
    }
  }
  return ok_status();
}

}  // namespace

std::string format_endpoint(const std::string& address, uint16_t port) {
  if (address.find(':') != std::string::npos) return fmt::format("[{}]:{}", address, port);
  return fmt::format("{}:{}", address, port);
}

Result<AddrList> resolve_host(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return plain_error("getaddrinfo", fmt::format("{}: {}", host, gai_strerror(rc)));
  }
  return AddrList{host, port, std::unique_ptr<addrinfo, AddrList::Free>(res)};
}

Result<Fd> tcp_connect(const std::string& host, uint16_t port, Deadline d) {
  auto addrs = resolve_host(host, port);
  if (!addrs) return addrs.error();
  return tcp_connect(*addrs, d);
}

void AddrList::Free::operator()(addrinfo* a) const noexcept { ::freeaddrinfo(a); }

Result<Fd> tcp_connect(const AddrList& addrs, Deadline d) {
  const uint16_t port = addrs.port;
  Error last = code_error("connect", EHOSTUNREACH, addrs.host);
  for (const addrinfo* ai = addrs.list.get(); ai != nullptr; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last = errno_error("socket");
      continue;
    }
    set_nonblocking(fd.get());
    const std::string ctx = fmt::format("{} port {}", format_sockaddr(ai->ai_addr), port);
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      last = errno_error("connect", ctx);
      continue;
    }
    if (auto w = wait_fd(fd.get(), POLLOUT, d, "connect"); !w) {
      last = code_error("connect", ETIMEDOUT, ctx);
      continue;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      last = code_error("connect", err, ctx);
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
  }
  return last;
}

Result<Fd> tcp_listen(const std::string& addr, uint16_t port, int backlog) {
  addrinfo hints{};
  hints.ai_family = addr.empty() ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(addr.empty() ? nullptr : addr.c_str(), service.c_str(), &hints, &res);
      rc != 0) {
    return plain_error("getaddrinfo", fmt::format("{}: {}", addr, gai_strerror(rc)));
  }
  Fd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    ::freeaddrinfo(res);
    return errno_error("socket");
  }
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (res->ai_family == AF_INET6) {
    int zero = 0;  // accept IPv4 too when listening on all addresses
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  }
  const std::string ctx = fmt::format("{} port {}", addr.empty() ? "*" : addr, port);
  if (::bind(fd.get(), res->ai_addr, res->ai_addrlen) != 0) {
    ::freeaddrinfo(res);
    return errno_error("bind", ctx);
  }
  ::freeaddrinfo(res);
  if (::listen(fd.get(), backlog) != 0) return errno_error("listen", ctx);
  set_nonblocking(fd.get());
  return fd;
}

Result<Fd> tcp_accept(const Fd& listener, Deadline d, std::string* peer) {
  for (;;) {
    if (auto w = wait_fd(listener.get(), POLLIN, d, "accept"); !w) return w.error();
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    Fd fd(::accept4(listener.get(), reinterpret_cast<sockaddr*>(&ss), &len,
                    SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.valid()) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      return errno_error("accept");
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (peer != nullptr) {
      *peer = format_endpoint(format_sockaddr(reinterpret_cast<sockaddr*>(&ss)),
                              ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port));
    }
    return fd;
  }
}

Status send_frame(const Fd& fd, const nlohmann::json& msg, Deadline d) {
  std::string body = msg.dump();
  if (body.size() > kMaxFrame) {
    return plain_error("send_frame",
                       fmt::format("message of {} bytes over the {} cap", body.size(), kMaxFrame));
  }
  const uint32_t n = htonl(static_cast<uint32_t>(body.size()));
  std::string frame(reinterpret_cast<const char*>(&n), 4);
  frame += body;
  return io_all(fd.get(), frame.data(), frame.size(), true, d);
}

Result<nlohmann::json, FrameError> read_frame(const Fd& fd, Deadline d, uint32_t max) {
  uint32_t n = 0;
  if (auto s = io_all(fd.get(), reinterpret_cast<char*>(&n), 4, false, d); !s) {
    const int e = s.error().errnum;
    const FrameFault f = e == ETIMEDOUT    ? FrameFault::kTimedOut
                         : e == ECONNRESET ? FrameFault::kClosed
                                           : FrameFault::kIo;
    return FrameError{f, s.error()};
  }
  n = ntohl(n);
  if (auto s = check_frame_length(n, max); !s) return FrameError{FrameFault::kNotAFrame, s.error()};
  std::string body(n, '\0');
  if (auto s = io_all(fd.get(), body.data(), n, false, d); !s) {
    return FrameError{FrameFault::kIo, s.error()};
  }
  auto j = decode_frame_body(body);
  if (!j) return FrameError{FrameFault::kNotAFrame, j.error()};
  return std::move(*j);
}

Result<nlohmann::json> recv_frame(const Fd& fd, Deadline d, uint32_t max) {
  auto j = read_frame(fd, d, max);
  if (!j) return j.error().error;
  return std::move(*j);
}

Status check_frame_length(uint32_t n, uint32_t max) {
  if (n == 0 || n > max) {
    return plain_error("recv_frame", fmt::format("frame length {} outside 1..{}", n, max));
  }
  return ok_status();
}

Result<nlohmann::json> decode_frame_body(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return plain_error("recv_frame", "frame is not a JSON object");
  }
  return j;
}

std::string local_address(const Fd& fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return format_sockaddr(reinterpret_cast<sockaddr*>(&ss));
}

std::string peer_address(const Fd& fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  return format_sockaddr(reinterpret_cast<sockaddr*>(&ss));
}

uint16_t local_port(const Fd& fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  return ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

}  // namespace rdmacheck
