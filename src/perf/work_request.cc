#include "perf/work_request.h"

#include <arpa/inet.h>

namespace rdmacheck::perf {

void build_wr(Op op, const conn::Endpoint& ep, const proto::QpInfo& peer, uint32_t size,
              uint32_t inline_size, WorkRequest& w) {
  w = WorkRequest{};
  const bool lands_here = op == Op::kRead || is_atomic(op);
  w.sge.addr = reinterpret_cast<uintptr_t>(ep.send_buf());
  w.sge.length = size;
  w.sge.lkey = ep.mr->lkey;
  w.wr.sg_list = &w.sge;
  w.wr.num_sge = 1;
  if (!lands_here && size <= inline_size) w.wr.send_flags |= IBV_SEND_INLINE;
  switch (op) {
    case Op::kWrite:
      w.wr.opcode = IBV_WR_RDMA_WRITE;
      break;
    case Op::kWriteImm:
      w.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      w.wr.imm_data = htonl(size);
      break;
    case Op::kRead:
      w.wr.opcode = IBV_WR_RDMA_READ;
      break;
    case Op::kSend:
      w.wr.opcode = IBV_WR_SEND;
      break;
    case Op::kAtomicFadd:
      w.wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
      w.wr.wr.atomic = {peer.addr, 1, 0, peer.rkey};  // add 1
      return;
    case Op::kAtomicCswap:
      w.wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
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
