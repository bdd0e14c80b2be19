// The endpoint's data path: receives posted, sends posted, completions
// waited for on the completion channel.
#include <fmt/core.h>
#include <poll.h>

#include <cerrno>

#include "conn/endpoint.h"

namespace rdmacheck::conn {

Status post_recv(Endpoint& ep, uint64_t wr_id, uint32_t len, uint32_t slot) {
  if (slot >= ep.recv_slots) return plain_error("post_recv", "no such receive slot");
  // Addressed as the device knows the region: from its IOVA.
  ibv_sge sge{ep.recv_iova + ep.half * slot, len, ep.recv_mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(ep.qp.get(), &wr, &bad); rc != 0) {
    return code_error("ibv_post_recv", rc, ep.context());
  }
  return ok_status();
}

Status post_receives(Endpoint& ep, uint32_t depth) {
  for (uint32_t i = 0; i < std::max(depth, ep.recv_slots); ++i) {
    const uint32_t slot = i % ep.recv_slots;
    if (auto s = post_recv(ep, kRecvWrId + slot, static_cast<uint32_t>(ep.half), slot); !s)
      return s;
  }
  return ok_status();
}

Status post_send(Endpoint& ep, uint64_t wr_id, uint32_t len, bool write_imm,
                 const proto::QpInfo& peer) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(ep.send_buf()), len, ep.send_mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (write_imm) {
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(static_cast<uint32_t>(wr_id));
    wr.wr.rdma.remote_addr = peer.addr;
    wr.wr.rdma.rkey = peer.rkey;
  } else {
    wr.opcode = IBV_WR_SEND;
  }
  if (ep.qp->qp_type == IBV_QPT_UD) {
    wr.wr.ud.ah = ep.ah.get();
    wr.wr.ud.remote_qpn = peer.qpn;
    wr.wr.ud.remote_qkey = peer.qkey;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(ep.qp.get(), &wr, &bad); rc != 0) {
    return code_error("ibv_post_send", rc, ep.context());
  }
  return ok_status();
}

Result<std::optional<ibv_wc>> next_completion(Endpoint& ep, Deadline d, int extra_fd) {
  for (;;) {
    ibv_wc wc{};
    int n = ibv_poll_cq(ep.cq.get(), 1, &wc);
    if (n < 0) return code_error("ibv_poll_cq", n, ep.context());
    if (n == 1) return std::optional<ibv_wc>(wc);
    if (int rc = ibv_req_notify_cq(ep.cq.get(), 0); rc != 0) {
      return code_error("ibv_req_notify_cq", rc, ep.context());
    }
    // A completion may have arrived between the poll and the request.
    n = ibv_poll_cq(ep.cq.get(), 1, &wc);
    if (n < 0) return code_error("ibv_poll_cq", n, ep.context());
    if (n == 1) return std::optional<ibv_wc>(wc);
    pollfd fds[2] = {{ep.channel->fd, POLLIN, 0}, {extra_fd, POLLIN, 0}};
    const int r = ::poll(fds, extra_fd >= 0 ? 2 : 1, ms_left(d));
    if (r < 0 && errno != EINTR) return errno_error("poll");
    if (r == 0) return code_error("completion", ETIMEDOUT, ep.context());
    if (extra_fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      return std::optional<ibv_wc>();
    }
    if ((fds[0].revents & POLLIN) != 0) take_cq_event(ep);
  }
}

void take_cq_event(Endpoint& ep) {
  ibv_cq* cq = nullptr;
  void* cq_ctx = nullptr;
  if (ibv_get_cq_event(ep.channel.get(), &cq, &cq_ctx) != 0) return;
  if (++ep.unacked_events >= 64) {
    ibv_ack_cq_events(ep.cq.get(), ep.unacked_events);
    ep.unacked_events = 0;
  }
}

std::string wc_status_text(ibv_wc_status s) {
  return fmt::format("{} ({})", ibv_wc_status_str(s), static_cast<int>(s));
}
}  // namespace rdmacheck::conn
