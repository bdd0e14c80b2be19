#include "net/channel.h"

#include <cerrno>

namespace rdmacheck {

std::string Channel::protection() const {
  if (!tls_) return "";
  return tls_->version() + " " + tls_->cipher();
}

Error tls_error_text(const TlsError& e) {
  Error out = e.error;
  // EBADMSG is the integrity failure as a value a diagnosis can test
  // (conn/diagnose.cc: session-tampered), whatever step of a session it hit.
  if (e.fault == TlsFault::kTampered) out.errnum = EBADMSG;
  return out;
}

Status Channel::send_frame(const nlohmann::json& msg, Deadline d) const {
  if (!tls_) return rdmacheck::send_frame(fd_, msg, d);
  if (auto s = tls_->send_frame(msg, d); !s) return tls_error_text(s.error());
  return Unit{};
}

Result<nlohmann::json> Channel::recv_frame(Deadline d, uint32_t max) const {
  if (!tls_) return rdmacheck::recv_frame(fd_, d, max);
  auto j = tls_->recv_frame(d, max);
  if (!j) return tls_error_text(j.error());
  return std::move(*j);
}

Result<nlohmann::json, FrameError> Channel::read_frame(Deadline d, uint32_t max) const {
  if (!tls_) return rdmacheck::read_frame(fd_, d, max);
  auto j = tls_->recv_frame(d, max);
  if (j) return std::move(*j);
  FrameFault f = FrameFault::kIo;
  switch (j.error().fault) {
    case TlsFault::kTimedOut:
      f = FrameFault::kTimedOut;
      break;
    case TlsFault::kClosed:
      f = FrameFault::kClosed;
      break;
    case TlsFault::kNotTls:
      f = FrameFault::kNotAFrame;
      break;
    default:
      break;
  }
  return FrameError{f, tls_error_text(j.error())};
}

void Channel::close(Deadline d) const {
  if (tls_) tls_->close(d);
}

}  // namespace rdmacheck
