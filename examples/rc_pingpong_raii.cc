// rc_pingpong_raii: rc_pingpong.cc again, on rdmacheck's own verbs core
// (src/verbs/ibv.h: one owner per verbs object; src/verbs/qp.h: the QP
// transitions as named functions) and its TCP with deadlines (src/net/tcp.h).
//
//   server:  rc_pingpong_raii [-p PORT] [-d DEV] [-g IDX]
//   client:  rc_pingpong_raii HOST [-p PORT] [-d DEV] [-g IDX] [-n ITERS]
//
// Read it beside rc_pingpong.cc: the steps are the same, numbered the same;
// the comments marked "RAII:" say what the wrappers took away.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "net/tcp.h"
#include "verbs/ibv.h"
#include "verbs/qp.h"

namespace {

using namespace rdmacheck;
constexpr size_t kMsgSize = 64;
constexpr uint8_t kIbPort = 1;
constexpr auto kCompletionWait = std::chrono::seconds(5);
constexpr auto kTcpWait = std::chrono::seconds(30);
constexpr uint64_t kRecv = 1, kSend = 2;  // our work requests' ids

struct Options {
  std::string host;  // empty: server
  uint16_t tcp_port = 18515;
  std::string device;
  int gid_index = -1;
  int iters = 100;
};

// RAII: the members are declared in creation order, so C++ destroys them in
// reverse (QP, CQ, MR, PD, context) on every path out, errors included. No
// Resources struct of raw pointers, no teardown() to keep in step by hand.
struct Endpoint {
  verbs::ContextPtr ctx;
  verbs::PdPtr pd;
  char buf[2 * kMsgSize] = {};  // [0, 64) sent from, [64, 128) received into
  verbs::MrPtr mr;
  verbs::CqPtr cq;
  verbs::QpPtr qp;
  int completed[3] = {};  // completions seen and not yet waited for, by wr_id
};

// RAII: errors are values (Result<T>) that name the failing call, its errno
// and the object: "ibv_modify_qp(RTR): Invalid argument [rxe0 port 1 qpn 0x11]".
int fail(const std::string& why) {
  std::fprintf(stderr, "rc_pingpong_raii: FAIL: %s\n", why.c_str());
  return 1;
}

// RAII: ibv_query_gid_table reports each GID's type itself, so no sysfs file
// is read; the rule is the same: RoCE v2, not link-local (fe80::/10).
int choose_gid(ibv_context* ctx) {
  auto table = verbs::query_gid_table(ctx, 256);
  if (!table) return -1;
  for (const auto& e : *table) {
    const bool link_local = e.gid.raw[0] == 0xfe && (e.gid.raw[1] & 0xc0) == 0x80;
    if (e.port_num == kIbPort && e.gid_type == IBV_GID_TYPE_ROCE_V2 && !link_local) {
      return static_cast<int>(e.gid_index);
    }
  }
  return -1;
}

std::string post_recv(Endpoint& e) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(e.buf + kMsgSize),
              .length = kMsgSize,
              .lkey = e.mr->lkey};
  ibv_recv_wr wr{.wr_id = kRecv, .sg_list = &sge, .num_sge = 1}, *bad = nullptr;
  return ibv_post_recv(e.qp.get(), &wr, &bad) == 0 ? "" : "ibv_post_recv";
}
std::string post_send(Endpoint& e) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(e.buf), .length = kMsgSize, .lkey = e.mr->lkey};
  ibv_send_wr wr{.wr_id = kSend,
                 .sg_list = &sge,
                 .num_sge = 1,
                 .opcode = IBV_WR_SEND,
                 .send_flags = IBV_SEND_SIGNALED},
      *bad = nullptr;
  return ibv_post_send(e.qp.get(), &wr, &bad) == 0 ? "" : "ibv_post_send";
}

// Waits for a completion of request WR_ID (kRecv or kSend), counting the
// other kind when it comes first; a failed one is named by its status.
std::string wait_for(Endpoint& e, uint64_t wr_id) {
  const Deadline deadline = deadline_in(kCompletionWait);
  while (e.completed[wr_id] == 0) {
    ibv_wc wc{};
    const int n = ibv_poll_cq(e.cq.get(), 1, &wc);
    if (n < 0) return "ibv_poll_cq failed";
    if (n == 0 && Clock::now() > deadline) return "no completion within 5 s";
    if (n == 0) continue;
    if (wc.status != IBV_WC_SUCCESS) {
      return std::string(wc.wr_id == kSend ? "send" : "receive") +
             " completion: " + ibv_wc_status_str(wc.status) + " (status " +
             std::to_string(wc.status) + ")";
    }
    ++e.completed[wc.wr_id];
  }
  --e.completed[wr_id];
  return "";
}

// RAII: the socket is an Fd (closed by its destructor), each wait takes a
// deadline, and the facts travel as one JSON frame instead of a hand-parsed line.
Result<Fd> tcp_open(const Options& o) {
  if (!o.host.empty()) return tcp_connect(o.host, o.tcp_port, deadline_in(kTcpWait));
  auto listener = tcp_listen("", o.tcp_port, 1);
  if (!listener) return listener.error();
  std::printf("listening on TCP port %u\n", o.tcp_port);
  std::fflush(stdout);
  return tcp_accept(*listener, deadline_in(kTcpWait), nullptr);
}

nlohmann::json facts(const verbs::RemoteQp& q, int mtu, int iters) {
  return {{"qpn", q.qpn},
          {"psn", q.psn},
          {"gid", std::vector<uint8_t>(q.gid.raw, q.gid.raw + 16)},
          {"mtu", mtu},
          {"iters", iters}};
}

// The peer's frame, read strictly: a missing or mistyped field is an error.
struct PeerFacts {
  verbs::RemoteQp qp;
  int mtu = 0;
  int iters = 0;
};
Result<PeerFacts> peer_facts(const nlohmann::json& j) {
  try {
    PeerFacts p{
        .qp = {.qpn = j.at("qpn"), .psn = j.at("psn")}, .mtu = j.at("mtu"), .iters = j.at("iters")};
    const auto gid = j.at("gid").get<std::vector<uint8_t>>();
    if (gid.size() != 16) return plain_error("peer facts", "the GID is not 16 bytes");
    std::memcpy(p.qp.gid.raw, gid.data(), 16);
    return p;
  } catch (const nlohmann::json::exception& ex) {
    return plain_error("peer facts", ex.what());
  }
}

int run(const Options& o) {
  // 1-2. Device and port. RAII: the device list frees itself.
  auto list = verbs::DeviceList::get();
  if (!list) return fail(list.error().message());
  ibv_device* dev = list->find(o.device);
  if (dev == nullptr) return fail("no RDMA device " + o.device);
  Endpoint e;
  auto ctx = verbs::open_device(dev);
  if (!ctx) return fail(ctx.error().message());
  e.ctx = std::move(*ctx);
  auto port = verbs::query_port(e.ctx.get(), kIbPort);
  if (!port) return fail(port.error().message());
  if (port->state != IBV_PORT_ACTIVE) return fail("port 1 is not ACTIVE");
  const int gid_index = o.gid_index >= 0 ? o.gid_index : choose_gid(e.ctx.get());
  if (gid_index < 0) return fail("no routable RoCE v2 GID on port 1 (force one with -g IDX)");

  // 3-6. PD, MR, CQ, QP: each factory checks its call and returns its owner.
  auto pd = verbs::alloc_pd(e.ctx.get());
  if (!pd) return fail(pd.error().message());
  e.pd = std::move(*pd);
  auto mr = verbs::reg_mr(e.pd.get(), e.buf, sizeof e.buf, IBV_ACCESS_LOCAL_WRITE);
  if (!mr) return fail(mr.error().message());
  e.mr = std::move(*mr);
  auto cq = verbs::create_cq(e.ctx.get(), 2, nullptr);
  if (!cq) return fail(cq.error().message());
  e.cq = std::move(*cq);
  ibv_qp_init_attr init = {
      .send_cq = e.cq.get(),
      .recv_cq = e.cq.get(),
      .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
      .qp_type = IBV_QPT_RC,
  };
  auto qp = verbs::create_qp(e.pd.get(), init);
  if (!qp) return fail(qp.error().message());
  e.qp = std::move(*qp);

  // 7. RESET -> INIT. RAII: a named transition that builds the attributes and
  //    the mask (verbs/qp.cc keeps them one per line) and reads ibv_modify_qp's
  //    positive errno correctly.
  if (auto s = verbs::to_init(e.qp.get(), kIbPort, 0); !s) return fail(s.error().message());
  if (auto err = post_recv(e); !err.empty()) return fail(err);

  // 8. Exchange QP facts over TCP, the client first.
  auto sock = tcp_open(o);
  if (!sock) return fail(sock.error().message());
  verbs::RemoteQp local{.qpn = e.qp->qp_num, .psn = std::random_device{}() & 0xffffff};
  if (ibv_query_gid(e.ctx.get(), kIbPort, gid_index, &local.gid) != 0) {
    return fail("ibv_query_gid");
  }
  const bool server = o.host.empty();
  const Deadline d = deadline_in(kTcpWait);
  if (!server) {
    if (auto s = send_frame(*sock, facts(local, port->active_mtu, o.iters), d); !s) {
      return fail(s.error().message());
    }
  }
  auto peer = recv_frame(*sock, d);
  if (!peer) return fail(peer.error().message());
  if (server) {
    if (auto s = send_frame(*sock, facts(local, port->active_mtu, 0), d); !s) {
      return fail(s.error().message());
    }
  }
  auto them = peer_facts(*peer);
  if (!them) return fail(them.error().message());
  const verbs::RemoteQp& remote = them->qp;
  const int iters = server ? them->iters : o.iters;

  // 9-10. INIT -> RTR -> RTS. RAII: PathParams and RcTiming carry the same
  //    attributes as rc_pingpong.cc spells out (hop limit 64, min RNR timer,
  //    timeout 14 = 67 ms, retry_cnt 6, rnr_retry 6: nothing waits forever).
  const verbs::PathParams path{
      .port = kIbPort,
      .sgid_index = gid_index,
      .mtu = static_cast<ibv_mtu>(std::min<int>(port->active_mtu, them->mtu)),
  };
  const verbs::RcTiming timing{.dest_rd_atomic = 1, .rd_atomic = 1};
  if (auto s = verbs::to_rtr(e.qp.get(), path, remote, timing); !s) {
    return fail(s.error().message());
  }
  if (auto s = verbs::to_rts(e.qp.get(), local.psn, timing); !s) return fail(s.error().message());

  // 11. Ping-pong, the same exchange as rc_pingpong.cc.
  double min_us = 1e18, sum_us = 0;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    std::string err;
    if (server) {
      err = wait_for(e, kRecv);
      if (err.empty()) std::memcpy(e.buf, e.buf + kMsgSize, kMsgSize);
      if (err.empty()) err = post_recv(e);
      if (err.empty()) err = post_send(e);
      if (err.empty()) err = wait_for(e, kSend);
    } else {
      std::snprintf(e.buf, kMsgSize, "ping %d", i);
      if (i > 0) err = post_recv(e);
      if (err.empty()) err = post_send(e);
      if (err.empty()) err = wait_for(e, kSend);
      if (err.empty()) err = wait_for(e, kRecv);
      if (err.empty() && std::memcmp(e.buf, e.buf + kMsgSize, kMsgSize) != 0) {
        err = "the echo differs from the ping";
      }
    }
    if (!err.empty()) return fail("round trip " + std::to_string(i + 1) + ": " + err);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    min_us = std::min(min_us, us);
    sum_us += us;
  }

  // 12. The final sync, one frame each way.
  if (auto s = send_frame(*sock, {{"done", true}}, deadline_in(kTcpWait)); !s) {
    return fail(s.error().message());
  }
  if (auto s = recv_frame(*sock, deadline_in(kTcpWait)); !s) return fail(s.error().message());
  if (server) {
    std::printf("answered %d round trips\n", iters);
  } else {
    std::printf("%d round trips of %zu bytes: min %.1f us, avg %.1f us\n", iters, kMsgSize, min_us,
                sum_us / iters);
  }
  std::printf("PASS\n");
  return 0;
  // 13. Teardown. RAII: nothing to write: sock, e and list go out of scope here,
  //     in reverse order of declaration.
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int c; (c = getopt(argc, argv, "p:d:g:n:")) != -1;) {
    switch (c) {
      case 'p':
        o.tcp_port = static_cast<uint16_t>(std::atoi(optarg));
        break;
      case 'd':
        o.device = optarg;
        break;
      case 'g':
        o.gid_index = std::atoi(optarg);
        break;
      case 'n':
        o.iters = std::atoi(optarg);
        break;
      default:
        std::fprintf(stderr,
                     "usage: rc_pingpong_raii [HOST] [-p PORT] [-d DEV] [-g IDX] [-n ITERS]\n");
        return 2;
    }
  }
  if (optind < argc) o.host = argv[optind];
  if (o.iters < 1 || o.tcp_port == 0) {
    std::fprintf(stderr, "rc_pingpong_raii: -n must be at least 1 and -p a TCP port\n");
    return 2;
  }
  return run(o);
}
