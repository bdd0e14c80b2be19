#include "conn/cm_endpoint.h"

#include <fmt/core.h>
#include <netdb.h>

#include <algorithm>

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

verbs::CmError local(Error e) { return verbs::CmError{std::move(e), std::nullopt, true}; }

rdma_conn_param conn_param(const verbs::RcTiming& timing) {
  const verbs::RcTiming t = verbs::clamp_timing(timing);
  rdma_conn_param p{};
  p.responder_resources = 16;
  p.initiator_depth = 16;
  p.retry_count = t.retry_cnt;
  p.rnr_retry_count = t.rnr_retry;
  return p;
}

// After ESTABLISHED, the QP state librdmacm left it in, for the timeline.
void record_cm_qp_state(Endpoint& ep, std::vector<proto::Step>& timeline) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(ep.qp.get(), &attr, IBV_QP_STATE, &init) == 0) {
    timeline.push_back(
        proto::Step{verbs::qp_state_name(attr.qp_state), 0, attr.qp_state == IBV_QPS_RTS, ""});
  }
}

// The ACK timeout of a librdmacm QP (it would otherwise pick its own).
void set_ack_timeout(rdma_cm_id* id, const verbs::RcTiming& t) {
  uint8_t timeout = verbs::clamp_timing(t).timeout;
  (void)rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout);
}

}  // namespace

Result<Endpoint, verbs::CmError> open_cm_endpoint(const EndpointOptions& o, const std::string& addr,
                                                  uint16_t port, Deadline d,
                                                  std::vector<proto::Step>& timeline) {
  Endpoint ep;
  auto ch = verbs::create_event_channel();
  if (!ch) return local(ch.error());
  ep.cm_channel = std::move(*ch);
  auto id = verbs::create_cm_id(ep.cm_channel.get());
  if (!id) return local(id.error());
  ep.cm_id = std::move(*id);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    return local(plain_error("getaddrinfo", fmt::format("{}: {}", addr, gai_strerror(rc))));
  }
  addrinfo* src = nullptr;
  if (!o.src.empty()) {
    if (int rc = ::getaddrinfo(o.src.c_str(), nullptr, &hints, &src); rc != 0) {
      ::freeaddrinfo(res);
      return local(
          plain_error("getaddrinfo", fmt::format("--src {}: {}", o.src, gai_strerror(rc))));
    }
  }
  if (o.tos >= 0) {  // perftest's -T with -R: the id's ToS, set before the route is resolved
    uint8_t tos = static_cast<uint8_t>(o.tos);
    if (rdma_set_option(ep.cm_id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) !=
        0) {
      ::freeaddrinfo(res);
      if (src != nullptr) ::freeaddrinfo(src);
      return local(errno_error("rdma_set_option(TOS)", std::to_string(o.tos)));
    }
  }
  const auto t0 = Clock::now();
  const int resolve_ms = std::clamp(ms_left(d), 1, 5000);
  const int rc = rdma_resolve_addr(ep.cm_id.get(), src != nullptr ? src->ai_addr : nullptr,
                                   res->ai_addr, resolve_ms);
  ::freeaddrinfo(res);
  if (src != nullptr) ::freeaddrinfo(src);
  if (rc != 0) return verbs::CmError{errno_error("rdma_resolve_addr", addr), std::nullopt};
  const std::string ctx = fmt::format("{} port {}", addr, port);
  auto step = [&](const char* name, const Result<verbs::CmEvent, verbs::CmError>& ev,
                  Clock::time_point start) {
    timeline.push_back(proto::Step{name, Micros(Clock::now() - start).count(), ev.ok(),
                                   ev.ok() ? "" : ev.error().error.message()});
  };
  auto ev = verbs::expect_cm_event(ep.cm_channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED, d, ctx);
  step("ADDR_RESOLVED", ev, t0);
  if (!ev) return ev.error();
  const auto t1 = Clock::now();
  if (rdma_resolve_route(ep.cm_id.get(), std::clamp(ms_left(d), 1, 5000)) != 0) {
    return verbs::CmError{errno_error("rdma_resolve_route", ctx), std::nullopt};
  }
  ev = verbs::expect_cm_event(ep.cm_channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED, d, ctx);
  step("ROUTE_RESOLVED", ev, t1);
  if (!ev) return ev.error();
  ep.verbs = ep.cm_id->verbs;
  // With --src rdma_cm resolves from that address, not the TCP socket's.
  EndpointOptions from = o;
  if (!o.src.empty()) from.local_address = o.src;
  if (auto s = pick_port_and_gid(ep, from, ep.cm_id->port_num); !s) return local(s.error());
  record_choice(ep, from,
                o.src.empty() ? "rdma_cm resolved the peer's address to it"
                              : "rdma_cm resolved the peer's address to it from --src " + o.src);
  if (auto s = create_resources(ep, o, ep.cm_id.get(), timeline); !s) return local(s.error());
  return ep;
}

Result<Endpoint, verbs::CmError> accept_cm_endpoint(const EndpointOptions& o, verbs::CmIdPtr id,
                                                    std::vector<proto::Step>& timeline) {
  Endpoint ep;
  auto ch = verbs::create_event_channel();
  if (!ch) return local(ch.error());
  ep.cm_channel = std::move(*ch);
  // Its events (ESTABLISHED, DISCONNECTED) now come to this session alone.
  if (rdma_migrate_id(id.get(), ep.cm_channel.get()) != 0)
    return local(errno_error("rdma_migrate_id"));
  ep.cm_id = std::move(id);
  ep.verbs = ep.cm_id->verbs;
  if (auto s = pick_port_and_gid(ep, o, ep.cm_id->port_num); !s) return local(s.error());
  record_choice(ep, o, "rdma_cm delivered the connection request on it");
  if (auto s = create_resources(ep, o, ep.cm_id.get(), timeline); !s) return local(s.error());
  return ep;
}

namespace {

// Starts the connection manager's side of the handshake (CALL: rdma_connect
// or rdma_accept) and waits for ESTABLISHED, recording the step.
template <typename Start>
CmStatus establish(Endpoint& ep, const verbs::RcTiming& t, rdma_conn_param p, const char* call,
                   Start start, Deadline d, std::vector<proto::Step>& timeline) {
  set_ack_timeout(ep.cm_id.get(), t);
  const auto t0 = Clock::now();
  if (start(ep.cm_id.get(), &p) != 0)
    return verbs::CmError{errno_error(call, ep.context()), std::nullopt};
  auto ev = verbs::expect_cm_event(ep.cm_channel.get(), RDMA_CM_EVENT_ESTABLISHED, d, ep.context());
  timeline.push_back(proto::Step{"ESTABLISHED", Micros(Clock::now() - t0).count(), ev.ok(),
                                 ev.ok() ? "" : ev.error().error.message()});
  if (!ev) return ev.error();
  record_cm_qp_state(ep, timeline);
  return Unit{};
}

}  // namespace

CmStatus cm_connect(Endpoint& ep, const std::string& private_data, const verbs::RcTiming& t,
                    Deadline d, std::vector<proto::Step>& timeline) {
  rdma_conn_param p = conn_param(t);
  p.private_data = private_data.data();
  p.private_data_len = static_cast<uint8_t>(private_data.size());
  return establish(ep, t, p, "rdma_connect", rdma_connect, d, timeline);
}

CmStatus cm_accept(Endpoint& ep, const verbs::RcTiming& t, Deadline d,
                   std::vector<proto::Step>& timeline) {
  return establish(ep, t, conn_param(t), "rdma_accept", rdma_accept, d, timeline);
}

}  // namespace rdmacheck::conn
