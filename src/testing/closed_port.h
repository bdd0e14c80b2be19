// Tests only: a loopback TCP port where nothing listens, held for as long as
// the object lives. A listener closed to free its port is no such thing under
// ctest -j: another test's listener on port 0 may be handed the same port the
// next moment and answer. A socket bound to the port but not listening keeps
// every other bind off it, and a connection to it is refused (RST).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>

#include "base/fd.h"

namespace rdmacheck::test_util {

class ClosedPort {
 public:
  ClosedPort() : sock_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (!sock_.valid() || ::bind(sock_.get(), reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        ::getsockname(sock_.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("ClosedPort: cannot bind a loopback port");
    }
    port_ = ntohs(a.sin_port);
  }
  uint16_t port() const { return port_; }

 private:
  Fd sock_;
  uint16_t port_ = 0;
};

}  // namespace rdmacheck::test_util
