#include "perf/responder.h"

#include <fmt/core.h>
#include <poll.h>

#include <array>
#include <atomic>

#include "net/tcp.h"
#include "perf/cpu_time.h"
#include "perf/engine.h"
#include "perf/spec.h"
#include "perf/sync.h"
#include "perf/validate.h"
#include "perf/work_request.h"

namespace rdmacheck::perf {
namespace {

constexpr uint64_t kSocketCheckEvery = 4096;  // busy loops look at the control socket this often

bool readable(const Channel& sock, int timeout_ms) {
  if (sock.buffered()) return true;
  pollfd p{sock.fd().get(), POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) > 0;
}

void note_wc(const ibv_wc& wc, proto::Bye& bye) {
  if (wc.status != IBV_WC_WR_FLUSH_ERR && bye.wc_errors.size() < 16) {
    bye.wc_errors.push_back(conn::wc_status_text(wc.status));
  }
}

// What one session needs to play its part and to answer the client's barriers.
struct Responder {
  conn::Endpoint& ep;
  const proto::Hello& hello;
  const proto::PerfParams& perf;
  const Channel& sock;
  Deadline end;
  conn::SessionTraffic& traffic;
  proto::Bye& bye;
  ResponderOutcome& out;
  Op op;
  DataPlan plan;
  uint64_t counted = 0;           // atomics: operations the client reported so far
  std::vector<uint64_t> own_ops;  // bidirectional: what we completed per size
  // Write ping-pong: the size whose last byte the client stamps, and how many
  // of it we answered. With -D (no iteration count) the client's check
  // barrier after each size moves us on.
  size_t echo_size = 0;
  uint64_t echo_in_size = 0;

  [[nodiscard]] uint32_t size_of(uint32_t step) const {
    return step < perf.sizes.size() ? perf.sizes[step] : 0;
  }

  // --validate: our sources for STEP (what we send, or what the client reads).
  void prepare(uint32_t step) {
    const uint32_t size = size_of(step);
    if (!perf.validate || size == 0) return;
    if (plan.fills_send) fill_pattern(ep.send_buf(), size, perf.seed, Side::kServer, step);
    if (plan.fills_recv) fill_pattern(ep.recv_buf(), size, perf.seed, Side::kServer, step);
  }

  // --validate: what landed on our side in STEP, after both sides ran it.
  std::vector<std::string> check(uint32_t step, uint64_t client_ops) {
    std::vector<std::string> errors;
    const uint32_t size = size_of(step);
    if (!perf.validate || size == 0) return errors;
    auto note = [&](const char* what, const std::optional<std::string>& why) {
      if (why) errors.push_back(fmt::format("{} ({} B): {}", what, size, *why));
    };
    if (plan.checks_recv) {
      const uint64_t n = plan.last_byte_stamped ? size - 1 : size;
      note("data the client sent",
           check_pattern(ep.recv_buf() + plan.recv_offset, n, perf.seed, Side::kClient, step));
    }
    if (plan.checks_fetch) {
      note("data read from the client",
           check_pattern(ep.send_buf(), size, perf.seed, Side::kClient, step));
    }
    if (plan.checks_counter) {
      counted += client_ops;
      note("the client's atomics", check_counter(ep.recv_buf(), counted));
    }
    return errors;
  }

  // The client's done, into the outcome.
  void on_done(const nlohmann::json& frame) {
    auto done = proto::parse_done(frame);
    if (!done) {
      out.outcome = "bad message: " + done.error().message();
    } else if (done->received < done->sent) {
      out.outcome = "client saw failures";
    }
  }

  // One control frame: a check barrier is answered here; true when the
  // session is over (done, or a message that ends it).
  bool on_frame(const Result<nlohmann::json>& frame) {
    if (!frame) {
      out.outcome = "client went away: " + frame.error().message();
      return true;
    }
    if (proto::type_of(*frame) != proto::MessageType::kSync) {
      on_done(*frame);
      return true;
    }
    auto sync = proto::parse_sync(*frame);
    if (!sync) {
      out.outcome = "bad message: " + sync.error().message();
      return true;
    }
    if (sync->phase == proto::SyncPhase::kGo) return answer(*sync, {}, true);
    if (perf.iterations == 0) {
      echo_size = sync->step + 1;
      echo_in_size = 0;
    }
    proto::Sync reply = *sync;
    reply.errors = check(sync->step, sync->ops);
    reply.ops = sync->step < own_ops.size() ? own_ops[sync->step] : 0;
    prepare(sync->step + 1);
    return answer(reply, reply.errors, false);
  }

  bool answer(proto::Sync reply, std::vector<std::string> errors, bool ends) {
    reply.errors = std::move(errors);
    if (auto s = send_frame(sock, proto::to_json(reply), deadline_in(std::chrono::seconds(5)));
        !s) {
      out.outcome = "client went away: " + s.error().message();
      return true;
    }
    if (ends) out.outcome = "a go barrier outside a bidirectional test";
    return ends;
  }

  // One-sided ops: the data path never touches this CPU; wait for the client.
  void stay_out_of_the_way() {
    for (;;) {
      while (!readable(sock, std::min(ms_left(end), 200))) {
        if (Clock::now() >= end) {
          out.outcome = "session time limit reached";
          return;
        }
      }
      if (on_frame(recv_frame(sock, deadline_in(std::chrono::seconds(2))))) return;
    }
  }

  // send / write_imm bandwidth: repost every receive as it completes, sleeping
  // on the completion channel between bursts.
  void sink() {
    for (;;) {
      auto wc = conn::next_completion_or_frame(ep, end, sock);
      if (!wc) {
        out.outcome =
            wc.error().errnum == ETIMEDOUT ? "session time limit reached" : wc.error().message();
        return;
      }
      if (!wc->has_value()) {
        if (on_frame(recv_frame(sock, deadline_in(std::chrono::seconds(2))))) return;
        continue;
      }
      if ((*wc)->status != IBV_WC_SUCCESS) {
        note_wc(**wc, bye);
        continue;
      }
      ++out.received;
      if (auto s = conn::post_recv(ep, 0, static_cast<uint32_t>(ep.half)); !s) {
        out.outcome = s.error().message();
        return;
      }
    }
  }

  bool post_echo(uint32_t len) {
    if (auto why = traffic.charge(len)) {
      out.outcome = *why;
      stay_out_of_the_way();
      return false;
    }
    WorkRequest w;
    build_wr(op, ep, hello.qp, len, perf.inline_size, w);  // inline as the client does
    w.wr.send_flags |= IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(ep.qp.get(), &w.wr, &bad) != 0) {
      out.outcome = "could not post the echo";
      stay_out_of_the_way();
      return false;
    }
    ++out.replied;
    return true;
  }

  // Ping-pongs, busy-polled as the client does: send echoes each receive with
  // a send of its length; write answers each stamped write with one of its own.
  void echo() {
    const bool ud = ep.qp->qp_type == IBV_QPT_UD;
    uint64_t stamp = 0;
    for (uint64_t spins = 1;; ++spins) {
      if (spins % kSocketCheckEvery == 0) {
        if (readable(sock, 0)) {
          if (on_frame(recv_frame(sock, deadline_in(std::chrono::seconds(2))))) return;
        } else if (Clock::now() >= end) {
          out.outcome = "session time limit reached";
          return;
        }
      }
      ibv_wc wc{};
      const int n = ibv_poll_cq(ep.cq.get(), 1, &wc);
      if (n == 1 && wc.status != IBV_WC_SUCCESS) {
        note_wc(wc, bye);
        out.outcome = "completion error: " + conn::wc_status_text(wc.status);
        stay_out_of_the_way();
        return;
      }
      if (op == Op::kSend && n == 1 && (wc.opcode & IBV_WC_RECV) != 0) {
        ++out.received;
        const uint32_t len = ud ? wc.byte_len - 40 : wc.byte_len;
        if (!conn::post_recv(ep, 0, static_cast<uint32_t>(ep.half))) {
          out.outcome = "could not post a receive";
          stay_out_of_the_way();
          return;
        }
        if (!post_echo(len)) return;
      }
      if (op == Op::kWrite && echo_size < perf.sizes.size()) {
        const uint32_t size = perf.sizes[echo_size];
        const uint8_t mark = stamp_byte(stamp);
        if (static_cast<uint8_t>(*(static_cast<volatile char*>(ep.recv_buf()) + size - 1)) ==
            mark) {
          ++out.received;
          ++stamp;
          ep.send_buf()[size - 1] = static_cast<char>(mark);
          if (!post_echo(size)) return;
          if (++echo_in_size == perf.iterations) {
            echo_in_size = 0;
            ++echo_size;
          }
        }
      }
    }
  }

  // -b: the same test towards the client, size by size between go barriers,
  // while our receives stay posted for the client's direction.
  void bidirectional() {
    const Spec s = spec_of(hello.test);
    static const std::atomic<bool> never{false};
    conn::Endpoint* const eps[] = {&ep};
    for (;;) {
      auto frame = await_frame(sock, eps, end);
      if (!frame || proto::type_of(*frame) != proto::MessageType::kSync) {
        if (on_frame(frame)) return;
        continue;
      }
      auto sync = proto::parse_sync(*frame);
      if (!sync || sync->phase != proto::SyncPhase::kGo || sync->step >= perf.sizes.size()) {
        if (on_frame(frame)) return;
        continue;
      }
      const uint32_t size = perf.sizes[sync->step];
      if (auto why = traffic.may_send(perf.iterations > 0 ? perf.iterations * size : size)) {
        out.outcome = *why;
        (void)answer(*sync, {"the server's direction: " + *why}, false);
        stay_out_of_the_way();
        return;
      }
      prepare(sync->step);
      if (answer(*sync, {}, false)) return;
      Lane lane{&ep, hello.qp};
      const Deadline until = std::min(end, traffic.send_until());
      auto b = run_bw(std::span<Lane>(&lane, 1), s, size, until, never);
      if (b) traffic.account(b->msgs * size);
      if (!b && Clock::now() >= until && until < end) {
        out.outcome = *traffic.may_send(0);
        bye.wc_errors.push_back(out.outcome);
        stay_out_of_the_way();
        return;
      }
      if (!b) {
        out.outcome = "our direction failed: " + b.error().message();
        bye.wc_errors.push_back(b.error().message().substr(0, 200));
        stay_out_of_the_way();
        return;
      }
      own_ops.resize(sync->step + 1);
      own_ops[sync->step] = b->lane_ops.empty() ? 0 : b->lane_ops[0];
      bye.bw.push_back(proto::DirSample{b->size, b->msgs, b->seconds});
      out.replied += b->msgs;
    }
  }
};

}  // namespace

ResponderOutcome respond_perf(conn::Endpoint& ep, const proto::Hello& hello, const Channel& sock,
                              Deadline end, conn::SessionTraffic& traffic, proto::Bye& bye) {
  ResponderOutcome out;
  const Op op = hello.test.op;
  const bool lat = hello.test.kind == Kind::kLat;
  const proto::PerfParams& perf = *hello.test.perf;
  Responder r{
      ep,   hello,
      perf, sock,
      end,  traffic,
      bye,  out,
      op,   data_plan(op, lat ? Kind::kLat : Kind::kBw, hello.test.transport, perf.bidir, true)};
  r.prepare(0);
  const CpuClock cpu;
  if (perf.bidir) {
    r.bidirectional();
  } else if (lat && (op == Op::kSend || op == Op::kWrite)) {
    r.echo();
  } else if (two_sided(op)) {
    r.sink();
  } else {
    r.stay_out_of_the_way();
  }
  bye.cpu_s = cpu.cpu_s();
  bye.wall_s = cpu.wall_s();
  return out;
}

}  // namespace rdmacheck::perf
