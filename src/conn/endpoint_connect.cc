// The QP's way to RTS from the peer's QP facts (UD, UC, RC), and the facts
// this side sends the peer.
#include <fmt/core.h>

#include <algorithm>

#include "conn/endpoint.h"
#include "conn/exposure.h"
#include "conn/timed_step.h"

namespace rdmacheck::conn {

namespace {

// The device's limits on reads and atomics in flight per QP, as responder and
// as requester (rxe: 128 each; ConnectX: 16), within the verbs' 8 bits.
std::pair<uint8_t, uint8_t> device_rd_atom(ibv_context* ctx) {
  ibv_device_attr a{};
  if (ctx == nullptr || ibv_query_device(ctx, &a) != 0) return {16, 16};
  auto cap = [](int v) { return static_cast<uint8_t>(std::clamp(v, 1, 255)); };
  return {cap(a.max_qp_rd_atom), cap(a.max_qp_init_rd_atom)};
}

}  // namespace

proto::QpInfo local_qp_info(const Endpoint& ep) {
  proto::QpInfo q;
  q.qpn = ep.qp->qp_num;
  q.psn = ep.psn;
  q.gid = gid_text(ep.gid);
  q.lid = ep.port_attr.lid;
  q.qkey = ep.qp->qp_type == IBV_QPT_UD ? ep.qkey : 0;
  q.rd_atom = device_rd_atom(ep.verbs).first;
  return advertise(q, ep.recv_access, ep.recv_iova, ep.recv_mr->rkey);
}

int path_mtu_limit(int peer_mtu, int asked) {
  return asked > 0 && asked < peer_mtu ? asked : peer_mtu;
}

Status connect_qp(Endpoint& ep, const proto::QpInfo& peer, int peer_mtu, const verbs::RcTiming& t,
                  std::vector<proto::Step>& timeline) {
  auto gid = parse_gid(peer.gid);
  if (!gid) return plain_error("handshake", "peer GID is malformed");
  // Both sides use the smaller of the two active MTUs, as perftest does: a
  // side that sent its own larger MTU would have frames dropped by the other.
  int mtu_enum = ep.port_attr.active_mtu;
  for (int e = IBV_MTU_4096; e >= IBV_MTU_256; --e) {
    if (verbs::mtu_bytes(static_cast<ibv_mtu>(e)) <= peer_mtu) {
      mtu_enum = std::min(mtu_enum, e);
      break;
    }
  }
  if (ep.qp->qp_type == IBV_QPT_UD) {
    if (auto s = timed_step(timeline, "RTR", [&] { return verbs::ud_to_rtr(ep.qp.get()); }); !s) {
      return s;
    }
    if (auto s = timed_step(timeline, "RTS", [&] { return verbs::ud_to_rts(ep.qp.get(), ep.psn); });
        !s) {
      return s;
    }
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.grh.dgid = *gid;
    ah.grh.sgid_index = static_cast<uint8_t>(ep.gid_index);
    ah.grh.hop_limit = 64;
    ah.grh.traffic_class = ep.traffic_class;
    ah.sl = ep.sl;
    ah.dlid = peer.lid;
    ah.port_num = ep.port;
    auto created = verbs::create_ah(ep.pd.get(), ah);
    if (!created) return created.error();
    ep.ah = std::move(*created);
    return ok_status();
  }
  const verbs::PathParams path{ep.port,
                               ep.gid_index,
                               static_cast<ibv_mtu>(mtu_enum),
                               ep.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET,
                               ep.traffic_class,
                               ep.sl};
  verbs::RemoteQp remote{peer.qpn, peer.psn, *gid, peer.lid};
  // What the QP really carries, as the device reports it after RTR.
  auto read_back = [&ep]() {
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(ep.qp.get(), &attr, IBV_QP_AV | IBV_QP_PATH_MTU, &init) == 0) {
      ep.traffic_class = attr.ah_attr.grh.traffic_class;
      ep.sl = attr.ah_attr.sl;
      ep.path_mtu = verbs::mtu_bytes(attr.path_mtu);
    }
  };
  if (ep.qp->qp_type == IBV_QPT_UC) {
    if (auto s = timed_step(timeline, "RTR",
                            [&] { return verbs::uc_to_rtr(ep.qp.get(), path, remote); });
        !s) {
      return s;
    }
    read_back();
    return timed_step(timeline, "RTS", [&] { return verbs::uc_to_rts(ep.qp.get(), ep.psn); });
  }
  // As many reads in flight as both devices allow, as perftest does: the
  // fixed 16 of ConnectX halved read bandwidth on rxe, which takes 128.
  verbs::RcTiming rt = t;
  const auto [dest, init] = device_rd_atom(ep.verbs);
  rt.dest_rd_atomic = dest;
  rt.rd_atomic =
      static_cast<uint8_t>(std::min<uint32_t>(init, peer.rd_atom == 0 ? 1 : peer.rd_atom));
  if (auto s =
          timed_step(timeline, "RTR", [&] { return verbs::to_rtr(ep.qp.get(), path, remote, rt); });
      !s) {
    return s;
  }
  read_back();
  return timed_step(timeline, "RTS", [&] { return verbs::to_rts(ep.qp.get(), ep.psn, rt); });
}

}  // namespace rdmacheck::conn
