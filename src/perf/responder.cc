#include "perf/responder.h"

#include <poll.h>

#include "perf/engine.h"
#include "perf/spec.h"
#include "perf/work_request.h"

namespace rdmacheck::perf {
namespace {

constexpr uint64_t kSocketCheckEvery = 4096;  // busy loops look at the control socket this often

bool readable(const Fd& sock, int timeout_ms) {
  pollfd p{sock.get(), POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0;
}

// The client's done (or its absence), into the outcome.
void read_done(const Fd& sock, ResponderOutcome& out) {
  auto frame = recv_frame(sock, deadline_in(std::chrono::seconds(2)));
  if (!frame) {
    out.outcome = "client went away: " + frame.error().message();
    return;
  }
  auto done = proto::parse_done(*frame);
  if (!done) {
    out.outcome = "bad message: " + done.error().message();
  } else if (done->received < done->sent) {
    out.outcome = "client saw failures";
  }
}

void note_wc(const ibv_wc& wc, proto::Bye& bye) {
  if (wc.status != IBV_WC_WR_FLUSH_ERR && bye.wc_errors.size() < 16) {
    bye.wc_errors.push_back(conn::wc_status_text(wc.status));
  }
}

// One-sided ops: the data path never touches this CPU; wait for the client.
void stay_out_of_the_way(const Fd& sock, Deadline end, ResponderOutcome& out) {
  while (!readable(sock, std::min(ms_left(end), 200))) {
    if (Clock::now() >= end) {
      out.outcome = "session time limit reached";
      return;
    }
  }
  read_done(sock, out);
}

// send / write_imm bandwidth: repost every receive as it completes, sleeping
// on the completion channel between bursts.
void sink(conn::Endpoint& ep, uint32_t size, const Fd& sock, Deadline end, proto::Bye& bye,
          ResponderOutcome& out) {
  for (;;) {
    auto wc = conn::next_completion(ep, end, sock.get());
    if (!wc) {
      out.outcome =
          wc.error().errnum == ETIMEDOUT ? "session time limit reached" : wc.error().message();
      return;
    }
    if (!wc->has_value()) return read_done(sock, out);
    if ((*wc)->status != IBV_WC_SUCCESS) {
      note_wc(**wc, bye);
      continue;
    }
    ++out.received;
    if (auto s = conn::post_recv(ep, 0, size); !s) {
      out.outcome = s.error().message();
      return;
    }
  }
}

// Ping-pongs, busy-polled as the client does: send echoes each receive with a
// send of its length; write answers each stamped write with one of its own.
void echo(conn::Endpoint& ep, const proto::Hello& hello, Op op, const Fd& sock, Deadline end,
          proto::Bye& bye, ResponderOutcome& out) {
  const auto& perf = *hello.test.perf;
  const bool ud = ep.qp->qp_type == IBV_QPT_UD;
  uint64_t stamp = 0;
  size_t size_index = 0;
  uint64_t in_size = 0;
  for (uint64_t spins = 1;; ++spins) {
    if (spins % kSocketCheckEvery == 0) {
      if (readable(sock, 0)) return read_done(sock, out);
      if (Clock::now() >= end) {
        out.outcome = "session time limit reached";
        return;
      }
    }
    ibv_wc wc{};
    const int n = ibv_poll_cq(ep.cq.get(), 1, &wc);
    if (n == 1 && wc.status != IBV_WC_SUCCESS) {
      note_wc(wc, bye);
      out.outcome = "completion error: " + conn::wc_status_text(wc.status);
      stay_out_of_the_way(sock, end, out);
      return;
    }
    if (op == Op::kSend && n == 1 && (wc.opcode & IBV_WC_RECV) != 0) {
      ++out.received;
      const uint32_t len = ud ? wc.byte_len - 40 : wc.byte_len;
      WorkRequest w;
      build_wr(op, ep, hello.qp, len, 0, w);
      w.wr.send_flags |= IBV_SEND_SIGNALED;
      ibv_send_wr* bad = nullptr;
      if (!conn::post_recv(ep, 0, static_cast<uint32_t>(ep.half)) ||
          ibv_post_send(ep.qp.get(), &w.wr, &bad) != 0) {
        out.outcome = "could not post the echo";
        stay_out_of_the_way(sock, end, out);
        return;
      }
      ++out.replied;
    }
    if (op == Op::kWrite && size_index < perf.sizes.size()) {
      const uint32_t size = perf.sizes[size_index];
      const uint8_t mark = stamp_byte(stamp);
      if (static_cast<uint8_t>(*(static_cast<volatile char*>(ep.recv_buf()) + size - 1)) == mark) {
        ++out.received;
        ++stamp;
        ep.send_buf()[size - 1] = static_cast<char>(mark);
        WorkRequest w;
        build_wr(op, ep, hello.qp, size, 0, w);
        w.wr.send_flags |= IBV_SEND_SIGNALED;
        ibv_send_wr* bad = nullptr;
        if (ibv_post_send(ep.qp.get(), &w.wr, &bad) != 0) {
          out.outcome = "could not post the echo";
          stay_out_of_the_way(sock, end, out);
          return;
        }
        ++out.replied;
        if (++in_size == perf.iterations) {
          in_size = 0;
          ++size_index;
        }
      }
    }
  }
}

}  // namespace

ResponderOutcome respond_perf(conn::Endpoint& ep, const proto::Hello& hello, const Fd& sock,
                              Deadline end, proto::Bye& bye) {
  ResponderOutcome out;
  const Op op = parse_op(hello.test.op).value_or(Op::kWrite);
  const bool lat = hello.test.kind == "lat";
  if (lat && (op == Op::kSend || op == Op::kWrite)) {
    echo(ep, hello, op, sock, end, bye, out);
  } else if (!lat && two_sided(op)) {
    sink(ep, static_cast<uint32_t>(ep.half), sock, end, bye, out);
  } else {
    stay_out_of_the_way(sock, end, out);
  }
  return out;
}

}  // namespace rdmacheck::perf
