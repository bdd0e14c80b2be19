#include "perf/work_request.h"

#include <arpa/inet.h>

namespace rdmacheck::perf {

void build_wr(Op op, const conn::Endpoint& ep, const proto::QpInfo& peer, uint32_t size,
              uint32_t inline_size, WorkRequest& w) {
  w = WorkRequest{};
  const bool lands_here = op == Op::kRead || is_atomic(op);
  w.sge.addr = reinterpret_cast<uintptr_t>(ep.send_buf());
  w.sge.length = size;
  w.sge.lkey = ep.send_mr->lkey;
  w.wr.sg_list = &w.sge;
  w.wr.num_sge = 1;
  if (!lands_here && size <= inline_size) w.wr.send_flags |= IBV_SEND_INLINE;
  w.wr.opcode = proto::info(op).opcode;
  if (op == Op::kWriteImm) w.wr.imm_data = htonl(size);
  if (op == Op::kAtomicFadd) {
    w.wr.wr.atomic = {peer.addr, 1, 0, peer.rkey};  // add 1
    return;
  }
  if (op == Op::kAtomicCswap) {
    w.wr.wr.atomic = {peer.addr, 0, 1, peer.rkey};  // see sequence_atomic
    return;
  }
  if (ep.qp->qp_type == IBV_QPT_UD) {
    w.wr.wr.ud.ah = ep.ah.get();
    w.wr.wr.ud.remote_qpn = peer.qpn;
    w.wr.wr.ud.remote_qkey = peer.qkey;
  } else if (op != Op::kSend) {
    w.wr.wr.rdma.remote_addr = peer.addr;
    w.wr.wr.rdma.rkey = peer.rkey;
  }
}

Status post_receive(conn::Endpoint& ep, uint32_t size) {
  const bool ud = ep.qp->qp_type == IBV_QPT_UD;
  return conn::post_recv(ep, 0, size + (ud ? 40 : 0));
}

}  // namespace rdmacheck::perf
