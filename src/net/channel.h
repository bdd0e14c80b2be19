// The control connection of a session: a TCP socket whose frames (net/tcp.h)
// travel in clear until the greeting moves them into TLS 1.3 (net/tls.h).
// Everything that talks to a peer past the greeting takes a Channel, so a
// frame cannot bypass TLS by reaching for the socket.
//
// Like Fd, a Channel is a handle: const methods still send and receive (the
// TLS state is the connection's, not the handle's value).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "net/tcp.h"
#include "net/tls.h"

namespace rdmacheck {

class Channel {
 public:
  Channel() = default;
  explicit Channel(Fd fd) : fd_(std::move(fd)) {}

  // The socket, for poll, addresses and shutdown; never for frames.
  [[nodiscard]] const Fd& fd() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_.valid(); }
  // From now on every frame goes through TLS.
  void secure(TlsChannel tls) { tls_ = std::make_unique<TlsChannel>(std::move(tls)); }
  [[nodiscard]] const TlsChannel* tls() const { return tls_.get(); }
  // Bytes of the peer's already taken from the socket and not yet read as a
  // frame: a caller that polls the socket for the next frame asks this first.
  [[nodiscard]] bool buffered() const { return tls_ && tls_->buffered(); }
  // The session's protection, for logs: "TLSv1.3 TLS_AES_128_GCM_SHA256", or "".
  [[nodiscard]] std::string protection() const;

  [[nodiscard]] Status send_frame(const nlohmann::json& msg, Deadline d) const;
  [[nodiscard]] Result<nlohmann::json> recv_frame(Deadline d, uint32_t max = kMaxFrame) const;
  [[nodiscard]] Result<nlohmann::json, FrameError> read_frame(Deadline d,
                                                              uint32_t max = kMaxFrame) const;
  // TLS's close_notify, best effort (nothing in clear).
  void close(Deadline d) const;

 private:
  Fd fd_;
  std::unique_ptr<TlsChannel> tls_;
};

// The free functions of net/tcp.h, for a Channel.
inline Status send_frame(const Channel& c, const nlohmann::json& msg, Deadline d) {
  return c.send_frame(msg, d);
}
inline Result<nlohmann::json> recv_frame(const Channel& c, Deadline d, uint32_t max = kMaxFrame) {
  return c.recv_frame(d, max);
}
inline Result<nlohmann::json, FrameError> read_frame(const Channel& c, Deadline d,
                                                     uint32_t max = kMaxFrame) {
  return c.read_frame(d, max);
}
inline std::string local_address(const Channel& c) { return local_address(c.fd()); }
inline std::string peer_address(const Channel& c) { return peer_address(c.fd()); }

// What a TLS failure means as a plain error (its fault named in the context).
Error tls_error_text(const TlsError& e);

}  // namespace rdmacheck
