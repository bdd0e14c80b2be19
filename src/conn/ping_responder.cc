#include <endian.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "conn/responder.h"
#include "net/tcp.h"

namespace rdmacheck::conn {

ResponderOutcome respond_ping(Endpoint& ep, const proto::Hello& hello, const Channel& sock,
                              Deadline end, SessionTraffic& traffic, proto::Bye& bye) {
  ResponderOutcome out;
  const bool ud = hello.test.transport == proto::Transport::kUd;
  const bool write = hello.test.op == proto::Op::kWrite;
  const auto recv_len = static_cast<uint32_t>(ep.half);
  auto done = [&](std::string why) {
    out.outcome = std::move(why);
    out.received = bye.received;
    out.replied = bye.replied;
    return out;
  };
  const bool stamp = hello.test.probe;  // the welcome said so: proto::kTurnaroundOffset
  for (;;) {
    auto wc = next_completion_or_frame(ep, end, sock);
    const auto read_at = Clock::now();
    if (!wc) {
      return done(wc.error().errnum == ETIMEDOUT ? "session time limit reached"
                                                 : wc.error().message());
    }
    if (!wc->has_value()) {  // the control connection has something (or closed)
      auto frame = recv_frame(sock, deadline_in(std::chrono::seconds(2)));
      if (!frame) return done("client went away: " + frame.error().message());
      auto client_done = proto::parse_done(*frame);
      if (!client_done) return done("bad message: " + client_done.error().message());
      return done(client_done->received < client_done->sent ? "client saw failures" : "ok");
    }
    const ibv_wc& c = **wc;
    if (c.status != IBV_WC_SUCCESS) {
      if (c.status != IBV_WC_WR_FLUSH_ERR && bye.wc_errors.size() < 16) {
        bye.wc_errors.push_back(wc_status_text(c.status));
      }
      continue;  // keep waiting for the client's verdict
    }
    if (c.opcode != IBV_WC_RECV && c.opcode != IBV_WC_RECV_RDMA_WITH_IMM) {
      ++bye.replied;
      continue;
    }
    ++bye.received;
    uint32_t len = c.byte_len;
    const uint32_t slot = recv_slot_of(ep, c.wr_id).value_or(0);
    const char* data = ep.recv_buf(slot);
    if (ud) {
      len = len >= 40 ? len - 40 : 0;
      data += 40;
    }
    len = std::min<uint32_t>(len, static_cast<uint32_t>(ep.half));
    std::memmove(ep.send_buf(), data, len);
    if (auto s = post_recv(ep, kRecvWrId + slot, recv_len, slot); !s) {
      return done(s.error().message());
    }
    if (auto why = traffic.charge(len)) return done(*why);
    if (stamp && len >= proto::kTurnaroundEnd) {
      const uint64_t ns = htole64(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - read_at).count()));
      std::memcpy(ep.send_buf() + proto::kTurnaroundOffset, &ns, sizeof ns);
    }
    if (auto s = post_send(ep, 1, len, write, hello.qp); !s) return done(s.error().message());
  }
}

}  // namespace rdmacheck::conn
