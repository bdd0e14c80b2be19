// rc_pingpong: one reliable-connected (RC) queue pair on each of two hosts,
// a 64-byte message sent back and forth ITERS times, on raw libibverbs.
//
//   server:  rc_pingpong [-p PORT] [-d DEV] [-g IDX]
//   client:  rc_pingpong HOST [-p PORT] [-d DEV] [-g IDX] [-n ITERS]
//
// Read it top to bottom: each numbered step in run() is one step every RDMA
// program takes. It is modelled on rdma-core's rc_pingpong.c (libibverbs/examples/),
// with every attribute explained, every wait bounded, and no library but
// libibverbs. docs/learn-verbs.md walks through it; rc_pingpong_raii.cc is the
// same program on rdmacheck's own RAII wrappers.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMsgSize = 64;
constexpr int kIbPort = 1;  // ports are numbered from 1; rxe and most NICs have one
// Every wait has an end. A completion normally takes microseconds; the
// transport gives up after about 0.5 s (see RTS below), so 5 s is generous.
constexpr auto kCompletionWait = std::chrono::seconds(5);
constexpr int kTcpWaitSeconds = 30;  // accept, connect, send and receive on the socket
// Each work request carries an id of our choosing; its completion returns it.
constexpr uint64_t kRecv = 1, kSend = 2;

struct Options {
  std::string host;  // empty: server
  int tcp_port = 18515;
  std::string device;  // empty: the first device
  int gid_index = -1;  // -1: the first RoCE v2 GID that is not link-local
  int iters = 100;
};

// What each side must tell the other before its QP can reach RTR.
struct QpFacts {
  uint32_t qpn = 0;  // the queue pair number, the QP's address on the device
  uint32_t psn = 0;  // packet sequence number the sender starts with (24 bits)
  ibv_gid gid{};     // the port's address on the network (an IPv4/IPv6 address on RoCE)
  int mtu = 0;       // the port's active MTU, as enum ibv_mtu
  int iters = 0;     // the client tells the server how many round trips to answer
};

// Everything we create, so that one function can destroy it in reverse order.
struct Resources {
  ibv_device** devices = nullptr;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  char buf[2 * kMsgSize] = {};  // [0, 64) is sent from, [64, 128) received into
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  int sock = -1;
  int completed[3] = {};  // completions seen and not yet waited for, by wr_id
};

// One line on stderr saying what failed, and the exit status 1.
int fail(const std::string& why) {
  std::fprintf(stderr, "rc_pingpong: FAIL: %s\n", why.c_str());
  return 1;
}
std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// The GID table of a RoCE port holds one entry per IP address of its netdev
// and per RoCE version. RoCE v2 packets are UDP/IP (port 4791) and routable;
// v1 packets are raw Ethernet. The kernel names each entry's type in sysfs.
int choose_gid(ibv_context* ctx, int table_len) {
  const std::string dir = std::string("/sys/class/infiniband/") + ibv_get_device_name(ctx->device) +
                          "/ports/" + std::to_string(kIbPort) + "/gid_attrs/types/";
  for (int i = 0; i < table_len; ++i) {
    std::string type;
    std::getline(std::ifstream(dir + std::to_string(i)), type);  // unused entries: unreadable
    ibv_gid gid;
    if (type != "RoCE v2" || ibv_query_gid(ctx, kIbPort, i, &gid) != 0) continue;
    // fe80::/10 is IPv6 link-local: no route reaches it, skip it.
    if (gid.raw[0] == 0xfe && (gid.raw[1] & 0xc0) == 0x80) continue;
    return i;
  }
  return -1;
}

std::string gid_text(const ibv_gid& gid) {
  char s[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, gid.raw, s, sizeof s);
}

// The QP facts travel as one text line over TCP: "QPN PSN GID MTU ITERS".
bool send_facts(int sock, const QpFacts& f) {
  char line[128];
  const int n = std::snprintf(line, sizeof line, "%06x %06x %s %d %d\n", f.qpn, f.psn,
                              gid_text(f.gid).c_str(), f.mtu, f.iters);
  return send(sock, line, n, MSG_NOSIGNAL) == n;
}
bool recv_facts(int sock, QpFacts* f) {
  char line[128] = {};
  for (size_t got = 0; got == 0 || line[got - 1] != '\n'; ++got) {  // byte by byte, to the newline
    if (got + 1 == sizeof line || recv(sock, line + got, 1, 0) != 1) return false;
  }
  char gid[INET6_ADDRSTRLEN];
  return std::sscanf(line, "%x %x %45s %d %d", &f->qpn, &f->psn, gid, &f->mtu, &f->iters) == 5 &&
         inet_pton(AF_INET6, gid, f->gid.raw) == 1;
}

// A socket whose every wait (connect, accept, send, recv) ends after kTcpWaitSeconds.
int bounded_socket() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  const timeval tv{.tv_sec = kTcpWaitSeconds, .tv_usec = 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);  // recv and accept
  setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);  // send and connect
  return s;
}

// Server: wait for one client. Client: connect to HOST.
std::string tcp_open(const Options& o, Resources& r) {
  if (o.host.empty()) {
    const int l = bounded_socket();
    const int on = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in a{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(o.tcp_port))};
    if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l, 1) != 0) {
      close(l);
      return errno_text("bind/listen");
    }
    std::printf("listening on TCP port %d\n", o.tcp_port);
    std::fflush(stdout);  // a script may wait for this line
    r.sock = accept(l, nullptr, nullptr);
    close(l);
    return r.sock < 0 ? errno_text("accept (no client came)") : "";
  }
  addrinfo hints{.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = nullptr;
  if (getaddrinfo(o.host.c_str(), std::to_string(o.tcp_port).c_str(), &hints, &ai) != 0) {
    return "cannot resolve " + o.host;
  }
  r.sock = bounded_socket();
  const int rc = connect(r.sock, ai->ai_addr, ai->ai_addrlen);
  freeaddrinfo(ai);
  return rc != 0 ? errno_text("connect") : "";
}

int post_recv(Resources& r) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(r.buf + kMsgSize),
              .length = kMsgSize,
              .lkey = r.mr->lkey};
  ibv_recv_wr wr{.wr_id = kRecv, .sg_list = &sge, .num_sge = 1}, *bad = nullptr;
  return ibv_post_recv(r.qp, &wr, &bad);
}
int post_send(Resources& r) {
  ibv_sge sge{.addr = reinterpret_cast<uintptr_t>(r.buf), .length = kMsgSize, .lkey = r.mr->lkey};
  ibv_send_wr wr{.wr_id = kSend,
                 .sg_list = &sge,
                 .num_sge = 1,
                 .opcode = IBV_WR_SEND,
                 .send_flags = IBV_SEND_SIGNALED},  // signaled: we want its completion
      *bad = nullptr;
  return ibv_post_send(r.qp, &wr, &bad);
}

// Busy-polls the CQ until a completion of request WR_ID (kRecv or kSend) has
// come, or the wait ends: "" on success. Completions of the two queues may
// come in either order, so each one seen is counted by its kind.
std::string wait_for(Resources& r, uint64_t wr_id) {
  const auto deadline = Clock::now() + kCompletionWait;
  while (r.completed[wr_id] == 0) {
    ibv_wc wc{};
    const int n = ibv_poll_cq(r.cq, 1, &wc);
    if (n < 0) return "ibv_poll_cq failed";
    if (n == 0 && Clock::now() > deadline) return "no completion within 5 s";
    if (n == 0) continue;
    // The error path: name the status. IBV_WC_RETRY_EXC_ERR (12) means the
    // sender retransmitted retry_cnt times and no ACK ever came back: the
    // peer's QP is gone, or something between the two drops RoCE (UDP 4791).
    if (wc.status != IBV_WC_SUCCESS) {
      return std::string(wc.wr_id == kSend ? "send" : "receive") +
             " completion: " + ibv_wc_status_str(wc.status) + " (status " +
             std::to_string(wc.status) + ")";
    }
    ++r.completed[wc.wr_id];
  }
  --r.completed[wr_id];
  return "";
}

int run(const Options& o, Resources& r) {
  // 1. The device: the named one, or the first the kernel lists.
  int n = 0;
  r.devices = ibv_get_device_list(&n);
  for (int i = 0; r.devices != nullptr && i < n && r.ctx == nullptr; ++i) {
    if (o.device.empty() || o.device == ibv_get_device_name(r.devices[i])) {
      r.ctx = ibv_open_device(r.devices[i]);
    }
  }
  if (r.ctx == nullptr) return fail("no RDMA device " + (o.device.empty() ? "" : o.device));

  // 2. The port: it must be ACTIVE; its active MTU bounds the path MTU.
  ibv_port_attr port{};
  if (ibv_query_port(r.ctx, kIbPort, &port) != 0) return fail(errno_text("ibv_query_port"));
  if (port.state != IBV_PORT_ACTIVE) return fail("port 1 is not ACTIVE");
  const int gid_index = o.gid_index >= 0 ? o.gid_index : choose_gid(r.ctx, port.gid_tbl_len);
  if (gid_index < 0) return fail("no routable RoCE v2 GID on port 1 (force one with -g IDX)");

  // 3. Protection domain: the QP and the memory it may touch must share one.
  if ((r.pd = ibv_alloc_pd(r.ctx)) == nullptr) return fail(errno_text("ibv_alloc_pd"));
  // 4. Memory region: pins the buffer and gives the lkey that work requests name.
  //    Local write access is needed to receive into it.
  if ((r.mr = ibv_reg_mr(r.pd, r.buf, sizeof r.buf, IBV_ACCESS_LOCAL_WRITE)) == nullptr) {
    return fail(errno_text("ibv_reg_mr (is ulimit -l too low?)"));
  }
  // 5. Completion queue: where finished sends and receives are reported.
  if ((r.cq = ibv_create_cq(r.ctx, 2, nullptr, nullptr, 0)) == nullptr) {
    return fail(errno_text("ibv_create_cq"));
  }
  // 6. Queue pair: a send queue and a receive queue, one outstanding request each.
  ibv_qp_init_attr init = {
      .send_cq = r.cq,
      .recv_cq = r.cq,
      .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
      .qp_type = IBV_QPT_RC,  // reliable connected: acknowledged, retransmitted, in order
  };
  if ((r.qp = ibv_create_qp(r.pd, &init)) == nullptr) return fail(errno_text("ibv_create_qp"));

  // 7. RESET -> INIT: bind the QP to the port and say what the peer may do to
  //    our memory (nothing remote here: SEND needs no remote access).
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_INIT,
      .qp_access_flags = 0,
      .pkey_index = 0,  // partition key 0, the default partition
      .port_num = kIbPort,
  };
  // clang-format off
  if (int rc = ibv_modify_qp(r.qp, &attr,
                             IBV_QP_STATE |
                             IBV_QP_PKEY_INDEX |
                             IBV_QP_PORT |
                             IBV_QP_ACCESS_FLAGS); rc != 0) {
    // clang-format on
    return fail(std::string("ibv_modify_qp(INIT): ") + std::strerror(rc));  // returns the errno
  }
  // A receive must be posted before the peer's first message can arrive.
  if (post_recv(r) != 0) return fail("ibv_post_recv");

  // 8. Exchange QP facts over TCP. A random first PSN keeps a late packet of
  //    an earlier connection from being taken for one of this connection.
  if (auto err = tcp_open(o, r); !err.empty()) return fail(err);
  QpFacts local{.qpn = r.qp->qp_num,
                .psn = std::random_device{}() & 0xffffff,
                .mtu = port.active_mtu,
                .iters = o.iters};
  if (ibv_query_gid(r.ctx, kIbPort, gid_index, &local.gid) != 0) return fail("ibv_query_gid");
  QpFacts remote;
  const bool server = o.host.empty();
  // The client speaks first; the server answers once it knows the client.
  if (server ? !recv_facts(r.sock, &remote) || !send_facts(r.sock, local)
             : !send_facts(r.sock, local) || !recv_facts(r.sock, &remote)) {
    return fail("exchanging QP facts over TCP: the peer closed, or did not answer within 30 s");
  }
  const int iters = server ? remote.iters : o.iters;
  std::printf("local  QPN 0x%06x PSN 0x%06x GID[%d] %s\nremote QPN 0x%06x PSN 0x%06x GID %s\n",
              local.qpn, local.psn, gid_index, gid_text(local.gid).c_str(), remote.qpn, remote.psn,
              gid_text(remote.gid).c_str());

  // 9. INIT -> RTR (ready to receive): where the peer is and how to talk to it.
  attr = {
      .qp_state = IBV_QPS_RTR,
      // Packets are at most this big. Both ends must agree, so take the
      // smaller of the two ports' active MTUs (rxe: 1024 on a 1500 netdev).
      .path_mtu = static_cast<ibv_mtu>(std::min(local.mtu, remote.mtu)),
      .rq_psn = remote.psn,       // the PSN we expect first: the one the peer starts with
      .dest_qp_num = remote.qpn,  // the QP on the peer that ours is connected to
      // The address vector: how packets reach the peer. RoCE always carries
      // the global route header (is_global): the peer's GID is its IP address
      // (dgid); our GID index picks our address and the RoCE version; the hop
      // limit is the IP TTL (1 would stop at the first router).
      .ah_attr = {.grh = {.dgid = remote.gid,
                          .sgid_index = static_cast<uint8_t>(gid_index),
                          .hop_limit = 64},
                  .is_global = 1,
                  .port_num = kIbPort},
      .max_dest_rd_atomic = 1,  // RDMA reads/atomics the peer may have in flight on us
      .min_rnr_timer = 12,      // "receiver not ready" back-off we ask of the peer: 0.64 ms
  };
  // clang-format off
  if (int rc = ibv_modify_qp(r.qp, &attr,
                             IBV_QP_STATE |
                             IBV_QP_AV |
                             IBV_QP_PATH_MTU |
                             IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC |
                             IBV_QP_MIN_RNR_TIMER); rc != 0) {
    // clang-format on
    return fail(std::string("ibv_modify_qp(RTR): ") + std::strerror(rc));
  }

  // 10. RTR -> RTS (ready to send): how hard to try before giving up.
  attr = {
      .qp_state = IBV_QPS_RTS,
      .sq_psn = local.psn,  // the PSN our first packet carries (told to the peer above)
      .max_rd_atomic = 1,   // RDMA reads/atomics we may have in flight on the peer
      // ACK timeout: wait 4.096 us * 2^timeout for an ACK; 14 -> 67 ms.
      // (0 would mean wait forever.)
      .timeout = 14,
      // Retransmit up to 6 times (7 is the most) when no ACK comes: (1 + 6) *
      // 67 ms = about 0.5 s, then the send completes with IBV_WC_RETRY_EXC_ERR (12).
      .retry_cnt = 6,
      // Retries when the peer has no receive posted (RNR NAK). 7 would mean
      // forever, which turns a stuck peer into a hang: 6.
      .rnr_retry = 6,
  };
  // clang-format off
  if (int rc = ibv_modify_qp(r.qp, &attr,
                             IBV_QP_STATE |
                             IBV_QP_TIMEOUT |
                             IBV_QP_RETRY_CNT |
                             IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN |
                             IBV_QP_MAX_QP_RD_ATOMIC); rc != 0) {
    // clang-format on
    return fail(std::string("ibv_modify_qp(RTS): ") + std::strerror(rc));
  }

  // 11. Ping-pong: the client sends and waits for the echo; the server waits,
  //     re-posts its receive, and echoes. Each message carries its number.
  double min_us = 1e18, sum_us = 0;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    std::string err;
    if (server) {
      err = wait_for(r, kRecv);  // the ping
      if (err.empty()) {
        std::memcpy(r.buf, r.buf + kMsgSize, kMsgSize);  // echo what came
        if (post_recv(r) != 0 || post_send(r) != 0) err = "ibv_post_recv/ibv_post_send";
      }
      if (err.empty()) err = wait_for(r, kSend);  // the echo, acknowledged
    } else {
      std::snprintf(r.buf, kMsgSize, "ping %d", i);
      if (i > 0 && post_recv(r) != 0) err = "ibv_post_recv";  // the first was posted before RTR
      if (err.empty() && post_send(r) != 0) err = "ibv_post_send";
      if (err.empty()) err = wait_for(r, kSend);  // acknowledged by the peer
      if (err.empty()) err = wait_for(r, kRecv);  // the echo
      if (err.empty() && std::strncmp(r.buf, r.buf + kMsgSize, kMsgSize) != 0) {
        err = "the echo differs from the ping";
      }
    }
    if (!err.empty()) return fail("round trip " + std::to_string(i + 1) + ": " + err);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    min_us = std::min(min_us, us);
    sum_us += us;
  }

  // 12. Both sides say "done" over TCP, so neither tears its QP down while
  //     the other still waits for an ACK from it.
  char done = 'd';
  if (send(r.sock, &done, 1, MSG_NOSIGNAL) != 1 || recv(r.sock, &done, 1, 0) != 1) {
    return fail("final TCP sync: " + std::string(std::strerror(errno)));
  }
  if (server) {
    std::printf("answered %d round trips\n", iters);
  } else {
    std::printf("%d round trips of %d bytes: min %.1f us, avg %.1f us\n", iters, kMsgSize, min_us,
                sum_us / iters);
  }
  std::printf("PASS\n");
  return 0;
}

// 13. Teardown in reverse order of creation: a QP before the CQ it reports to,
//     the MR before its PD, the PD before the device context.
void teardown(Resources& r) {
  if (r.sock >= 0) close(r.sock);
  if (r.qp != nullptr) ibv_destroy_qp(r.qp);
  if (r.cq != nullptr) ibv_destroy_cq(r.cq);
  if (r.mr != nullptr) ibv_dereg_mr(r.mr);
  if (r.pd != nullptr) ibv_dealloc_pd(r.pd);
  if (r.ctx != nullptr) ibv_close_device(r.ctx);
  if (r.devices != nullptr) ibv_free_device_list(r.devices);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int c; (c = getopt(argc, argv, "p:d:g:n:")) != -1;) {
    switch (c) {
      case 'p':
        o.tcp_port = std::atoi(optarg);
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
        std::fprintf(stderr, "usage: rc_pingpong [HOST] [-p PORT] [-d DEV] [-g IDX] [-n ITERS]\n");
        return 2;
    }
  }
  if (optind < argc) o.host = argv[optind];
  if (o.iters < 1 || o.tcp_port < 1 || o.tcp_port > 65535) {
    std::fprintf(stderr, "rc_pingpong: -n must be at least 1 and -p a TCP port\n");
    return 2;
  }
  Resources r;
  const int status = run(o, r);
  teardown(r);
  return status;
}
