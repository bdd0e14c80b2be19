#include "conn/ping_prober.h"

#include <endian.h>
#include <fmt/core.h>

#include <cerrno>
#include <cstring>

#include "net/tcp.h"

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

constexpr uint64_t kSendId = 1;

}  // namespace

void Prober::fill(uint32_t size) const {
  char* b = ep_.send_buf();
  for (uint32_t i = 0; i < size; ++i) b[i] = static_cast<char>(i * 7 + size + seq_ * 13);
  if (size >= sizeof seq_) std::memcpy(b, &seq_, sizeof seq_);
}

uint32_t Prober::tag_of(const char* data, uint32_t len) const {
  uint32_t tag = 0;
  if (len >= sizeof tag) std::memcpy(&tag, data, sizeof tag);
  return tag;
}

// Every receive slot stays posted across probes: after a lost UD probe its
// receive is still there for the next echo, and a stale echo that takes one
// leaves the others for the real one. Each takes the largest message.
Status Prober::ensure_recv() {
  for (uint32_t i = 0; i < posted_.size(); ++i) {
    if (posted_[i]) continue;
    if (auto s = post_recv(ep_, kRecvWrId + i, static_cast<uint32_t>(ep_.half), i); !s) return s;
    posted_[i] = true;
  }
  return ok_status();
}

RoundTrip Prober::run(uint32_t size, std::chrono::milliseconds timeout) {
  RoundTrip r;
  ++seq_;
  fill(size);
  if (auto s = ensure_recv(); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  const auto t0 = Clock::now();
  if (auto s = post_send(ep_, kSendId, size, write_, peer_); !s) {
    r.errnum = s.error().errnum;
    r.error = s.error().message();
    return r;
  }
  bool sent = false;
  bool received = false;
  const Deadline d = Clock::now() + timeout;
  while (!(sent && received)) {
    auto wc = next_completion(ep_, d);
    if (!wc) {
      r.errnum = wc.error().errnum;
      r.error = wc.error().errnum == ETIMEDOUT
                    ? fmt::format("no completion within {} ms", timeout.count())
                    : wc.error().message();
      // A UD send completes locally; only the echo is missing: a lost datagram.
      r.lost = ud_ && sent && wc.error().errnum == ETIMEDOUT;
      r.acked = !ud_ && sent && wc.error().errnum == ETIMEDOUT;
      return r;
    }
    const ibv_wc& c = **wc;
    const std::optional<uint32_t> slot = recv_slot_of(ep_, c.wr_id);
    if (slot) posted_[*slot] = false;
    if (c.status != IBV_WC_SUCCESS) {
      r.wc_status = c.status;
      r.error = fmt::format("{} on {} ({})", wc_status_text(c.status),
                            c.wr_id == kSendId ? "send" : "receive", ep_.context());
      return r;
    }
    if (c.wr_id == kSendId) sent = true;
    if (slot) {
      const uint32_t got = ud_ ? c.byte_len - 40 : c.byte_len;
      char* data = ep_.recv_buf(*slot) + (ud_ ? 40 : 0);
      if (ud_ && size >= sizeof seq_ && tag_of(data, got) != seq_) {
        // The late echo of an earlier probe: wait on for this one's.
        if (auto s = ensure_recv(); !s) {
          r.errnum = s.error().errnum;
          r.error = s.error().message();
          return r;
        }
        continue;
      }
      received = true;
      r.rtt_us = Micros(Clock::now() - t0).count();
      if (stamped_ && got == size && size >= proto::kTurnaroundEnd) {
        // The stamp replaced those 8 bytes of ours; the rest must be as sent.
        uint64_t ns = 0;
        std::memcpy(&ns, data + proto::kTurnaroundOffset, sizeof ns);
        std::memcpy(data + proto::kTurnaroundOffset, ep_.send_buf() + proto::kTurnaroundOffset,
                    sizeof ns);
        r.turnaround_us = static_cast<double>(le64toh(ns)) / 1000;
      }
      if (got != size || std::memcmp(data, ep_.send_buf(), size) != 0) {
        r.error =
            fmt::format("echo of {} bytes came back as {} bytes or with other content", size, got);
        return r;
      }
    }
  }
  r.ok = true;
  return r;
}

}  // namespace rdmacheck::conn
