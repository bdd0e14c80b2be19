#include "perf/sync.h"

#include <fmt/core.h>
#include <poll.h>

#include "net/tcp.h"
#include "perf/engine.h"

namespace rdmacheck::perf {

Result<nlohmann::json> await_frame(const Channel& sock, std::span<conn::Endpoint* const> eps,
                                   Deadline d) {
  for (;;) {
    for (conn::Endpoint* ep : eps) {
      if (auto s = service_receives(*ep); !s) return s.error();
    }
    if (sock.buffered()) return recv_frame(sock, d);
    pollfd p{sock.fd().get(), POLLIN, 0};
    // A millisecond between CQ sweeps: the peer's last messages need receives
    // posted, but the emulated lab has one CPU per host to share.
    const int n = ::poll(&p, 1, 1);
    if (n > 0) return recv_frame(sock, d);
    if (n < 0 && errno != EINTR) return errno_error("poll", "control connection");
    if (Clock::now() >= d) return code_error("barrier", ETIMEDOUT, "waiting for the peer");
  }
}

Result<std::vector<proto::Sync>> exchange_sync(std::span<const Channel* const> socks,
                                               std::span<conn::Endpoint* const> eps,
                                               const std::vector<proto::Sync>& msgs, Deadline d) {
  for (size_t i = 0; i < socks.size(); ++i) {
    if (auto s = send_frame(*socks[i], proto::to_json(msgs[i]), d); !s) return s.error();
  }
  std::vector<proto::Sync> replies;
  for (size_t i = 0; i < socks.size(); ++i) {
    auto frame = await_frame(*socks[i], eps, d);
    if (!frame) return frame.error();
    if (proto::type_of(*frame) == proto::MessageType::kError) {
      return plain_error("barrier", "server: " + proto::error_text(*frame));
    }
    auto sync = proto::parse_sync(*frame);
    if (!sync) return sync.error();
    if (sync->step != msgs[i].step || sync->phase != msgs[i].phase) {
      return plain_error(
          "barrier", fmt::format("server answered {} {} to {} {}", name_of(sync->phase), sync->step,
                                 name_of(msgs[i].phase), msgs[i].step));
    }
    replies.push_back(std::move(*sync));
  }
  return replies;
}

}  // namespace rdmacheck::perf
