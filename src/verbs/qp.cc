#include "verbs/qp.h"

#include <algorithm>

#include "verbs/ibv.h"

namespace rdmacheck::verbs {
namespace {

// ibv_modify_qp returns the errno itself (a positive value), not -1.
Status modify(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* call, uint8_t port) {
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) {
    return code_error(call, rc, qp_context(qp, port));
  }
  return ok_status();
}

// The path to the remote QP that RTR installs, the same for RC and UC.
ibv_ah_attr address_vector(const PathParams& path, const RemoteQp& remote) {
  return {
      .grh =
          {
              .dgid = remote.gid,
              .flow_label = 0,
              .sgid_index = static_cast<uint8_t>(path.sgid_index),
              .hop_limit = 64,
              .traffic_class = path.traffic_class,
          },
      .dlid = remote.lid,
      .sl = path.sl,
      .src_path_bits = 0,
      .static_rate = 0,
      .is_global = static_cast<uint8_t>(path.global ? 1 : 0),
      .port_num = path.port,
  };
}

}  // namespace

RcTiming clamp_timing(RcTiming t) {
  t.timeout = std::clamp<uint8_t>(t.timeout, 1, 31);
  t.retry_cnt = std::min<uint8_t>(t.retry_cnt, 6);
  t.rnr_retry = std::min<uint8_t>(t.rnr_retry, 6);
  t.min_rnr_timer = std::min<uint8_t>(t.min_rnr_timer, 31);
  return t;
}

Status to_init(ibv_qp* qp, uint8_t port, int access_flags) {
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_INIT,
      .qp_access_flags = static_cast<unsigned>(access_flags),
      .pkey_index = 0,
      .port_num = port,
  };
  // One mask flag per line, as rdma-core writes them.
  // clang-format off
  return modify(qp, attr,
                IBV_QP_STATE |
                IBV_QP_PKEY_INDEX |
                IBV_QP_PORT |
                IBV_QP_ACCESS_FLAGS,
                "ibv_modify_qp(INIT)", port);
  // clang-format on
}

Status to_rtr(ibv_qp* qp, const PathParams& path, const RemoteQp& remote, const RcTiming& timing) {
  const RcTiming t = clamp_timing(timing);
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_RTR,
      .path_mtu = path.mtu,
      .rq_psn = remote.psn & 0xffffff,
      .dest_qp_num = remote.qpn,
      .ah_attr = address_vector(path, remote),
      .max_dest_rd_atomic = t.dest_rd_atomic,
      .min_rnr_timer = t.min_rnr_timer,
  };
  // One mask flag per line, as rdma-core writes them.
  // clang-format off
  return modify(qp, attr,
                IBV_QP_STATE |
                IBV_QP_AV |
                IBV_QP_PATH_MTU |
                IBV_QP_DEST_QPN |
                IBV_QP_RQ_PSN |
                IBV_QP_MAX_DEST_RD_ATOMIC |
                IBV_QP_MIN_RNR_TIMER,
                "ibv_modify_qp(RTR)", path.port);
  // clang-format on
}

Status to_rts(ibv_qp* qp, uint32_t sq_psn, const RcTiming& timing) {
  const RcTiming t = clamp_timing(timing);
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_RTS,
      .sq_psn = sq_psn & 0xffffff,
      .max_rd_atomic = t.rd_atomic,
      .timeout = t.timeout,
      .retry_cnt = t.retry_cnt,
      .rnr_retry = t.rnr_retry,
  };
  // One mask flag per line, as rdma-core writes them.
  // clang-format off
  return modify(qp, attr,
                IBV_QP_STATE |
                IBV_QP_TIMEOUT |
                IBV_QP_RETRY_CNT |
                IBV_QP_RNR_RETRY |
                IBV_QP_SQ_PSN |
                IBV_QP_MAX_QP_RD_ATOMIC,
                "ibv_modify_qp(RTS)", 0);
  // clang-format on
}

Status ud_to_init(ibv_qp* qp, uint8_t port, uint32_t qkey) {
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_INIT,
      .qkey = qkey,
      .pkey_index = 0,
      .port_num = port,
  };
  // One mask flag per line, as rdma-core writes them.
  // clang-format off
  return modify(qp, attr,
                IBV_QP_STATE |
                IBV_QP_PKEY_INDEX |
                IBV_QP_PORT |
                IBV_QP_QKEY,
                "ibv_modify_qp(INIT)", port);
  // clang-format on
}

Status ud_to_rtr(ibv_qp* qp) {
  ibv_qp_attr attr = {.qp_state = IBV_QPS_RTR};
  return modify(qp, attr, IBV_QP_STATE, "ibv_modify_qp(RTR)", 0);
}

Status ud_to_rts(ibv_qp* qp, uint32_t sq_psn) {
  ibv_qp_attr attr = {.qp_state = IBV_QPS_RTS, .sq_psn = sq_psn & 0xffffff};
  return modify(qp, attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "ibv_modify_qp(RTS)", 0);
}

Status uc_to_rtr(ibv_qp* qp, const PathParams& path, const RemoteQp& remote) {
  ibv_qp_attr attr = {
      .qp_state = IBV_QPS_RTR,
      .path_mtu = path.mtu,
      .rq_psn = remote.psn & 0xffffff,
      .dest_qp_num = remote.qpn,
      .ah_attr = address_vector(path, remote),
  };
  return modify(qp, attr,
                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
                "ibv_modify_qp(RTR)", path.port);
}

Status uc_to_rts(ibv_qp* qp, uint32_t sq_psn) {
  ibv_qp_attr attr = {.qp_state = IBV_QPS_RTS, .sq_psn = sq_psn & 0xffffff};
  return modify(qp, attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "ibv_modify_qp(RTS)", 0);
}

Status to_error(ibv_qp* qp) {
  ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
  return modify(qp, attr, IBV_QP_STATE, "ibv_modify_qp(ERROR)", 0);
}

Status to_reset(ibv_qp* qp) {
  ibv_qp_attr attr = {.qp_state = IBV_QPS_RESET};
  return modify(qp, attr, IBV_QP_STATE, "ibv_modify_qp(RESET)", 0);
}

const char* qp_state_name(ibv_qp_state s) {
  switch (s) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERROR";
    case IBV_QPS_UNKNOWN:
      break;
  }
  return "UNKNOWN";
}

}  // namespace rdmacheck::verbs
