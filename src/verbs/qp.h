// QP state changes as named functions, each one designated-initialiser
// attribute struct and one ibv_modify_qp call (after rdma-core's rc_pingpong).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "base/result.h"

namespace rdmacheck::verbs {

struct RemoteQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;  // 24 bits
  ibv_gid gid{};
  uint16_t lid = 0;  // InfiniBand only; 0 on RoCE
};

struct PathParams {
  uint8_t port = 1;
  int sgid_index = 0;
  ibv_mtu mtu = IBV_MTU_1024;
  bool global = true;         // RoCE always needs the GRH
  uint8_t traffic_class = 0;  // GRH traffic class (RoCE v2: DSCP << 2 | ECN), perftest's -T
  uint8_t sl = 0;             // service level (InfiniBand VL mapping), perftest's -S
};

// Reliability knobs of an RC QP. retry_cnt and rnr_retry are capped at 6: the
// value 7 means "retry forever" and turns a dead path into a hang; the ACK
// timeout is never 0 (infinite) for the same reason.
struct RcTiming {
  uint8_t timeout = 14;  // 4.096 us * 2^14 = 67 ms per try
  uint8_t retry_cnt = 6;
  uint8_t rnr_retry = 6;
  uint8_t min_rnr_timer = 12;  // 0.64 ms
  // RDMA reads and atomics in flight: what we accept as responder (RTR) and
  // issue as requester (RTS). Read bandwidth rises with the second; it must
  // not exceed what the peer accepts (conn::connect_qp takes the smaller).
  uint8_t dest_rd_atomic = 16;
  uint8_t rd_atomic = 16;
};
RcTiming clamp_timing(RcTiming t);

Status to_init(ibv_qp* qp, uint8_t port, int access_flags);
Status to_rtr(ibv_qp* qp, const PathParams& path, const RemoteQp& remote, const RcTiming& t);
Status to_rts(ibv_qp* qp, uint32_t sq_psn, const RcTiming& t);

// UD: INIT takes a Q_Key, RTR takes nothing, RTS the send PSN.
Status ud_to_init(ibv_qp* qp, uint8_t port, uint32_t qkey);
Status ud_to_rtr(ibv_qp* qp);
Status ud_to_rts(ibv_qp* qp, uint32_t sq_psn);

// UC: RTR and RTS without the reliability attributes (no ACKs, no retries,
// no RDMA read or atomics), which the kernel rejects on UC with EINVAL.
Status uc_to_rtr(ibv_qp* qp, const PathParams& path, const RemoteQp& remote);
Status uc_to_rts(ibv_qp* qp, uint32_t sq_psn);

Status to_error(ibv_qp* qp);
Status to_reset(ibv_qp* qp);

const char* qp_state_name(ibv_qp_state s);

}  // namespace rdmacheck::verbs
