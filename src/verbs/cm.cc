#include "verbs/cm.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>

namespace rdmacheck::verbs {

Result<CmChannelPtr> create_event_channel() {
  errno = 0;
  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr) return errno_error("rdma_create_event_channel");
  ::fcntl(ch->fd, F_SETFL, ::fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
  return CmChannelPtr(ch);
}

Result<CmIdPtr> create_cm_id(rdma_event_channel* ch) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) != 0) return errno_error("rdma_create_id");
  return CmIdPtr(id);
}

Result<CmEvent> next_cm_event(rdma_event_channel* ch, Deadline d) {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) {
      CmEvent out;
      out.type = ev->event;
      out.status = ev->status;
      if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
        out.id.reset(ev->id);
        if (ev->param.conn.private_data != nullptr) {
          out.private_data.assign(static_cast<const char*>(ev->param.conn.private_data),
                                  ev->param.conn.private_data_len);
        }
      }
      rdma_ack_cm_event(ev);
      return out;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return errno_error("rdma_get_cm_event");
    pollfd p{ch->fd, POLLIN, 0};
    const int n = ::poll(&p, 1, ms_left(d));
    if (n == 0)
      return code_error("rdma_get_cm_event", ETIMEDOUT, "no CM event before the deadline");
    if (n < 0 && errno != EINTR) return errno_error("poll");
  }
}

std::string CmBreak::name() const {
  if (event) return cm_event_short_name(*event);
  return timeout ? "timeout" : "";
}

std::string CmError::event_name() const {
  if (event) return cm_event_short_name(*event);
  return error.errnum == ETIMEDOUT ? "timeout" : "";
}

Result<CmEvent, CmError> expect_cm_event(rdma_event_channel* ch, rdma_cm_event_type want,
                                         Deadline d, const std::string& context) {
  auto ev = next_cm_event(ch, d);
  if (!ev) {
    return CmError{Error{ev.error().call, ev.error().errnum,
                         fmt::format("waiting for {} ({})", cm_event_short_name(want), context)},
                   std::nullopt};
  }
  if (ev->type != want) {
    return CmError{
        Error{"rdma_cm", ev->status < 0 ? -ev->status : 0,
              fmt::format("{} instead of {}: {} ({})", cm_event_short_name(ev->type),
                          cm_event_short_name(want), cm_event_meaning(ev->type), context)},
        ev->type};
  }
  return std::move(*ev);
}

std::string cm_event_short_name(rdma_cm_event_type t) {
  std::string s = rdma_event_str(t);
  const std::string prefix = "RDMA_CM_EVENT_";
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  return s;
}

std::string cm_event_meaning(rdma_cm_event_type t) {
  switch (t) {
    case RDMA_CM_EVENT_ADDR_ERROR:
      return "the address could not be resolved to an RDMA device: the interface that routes to "
             "the peer has no RDMA device, or the peer does not answer ARP/ND";
    case RDMA_CM_EVENT_ROUTE_ERROR:
      return "no route to the peer over an RDMA device (several NICs: the route leaves through "
             "one without RDMA; give the source address: --src, or UCX_RDMA_CM_SOURCE_ADDRESS for "
             "UCX)";
    case RDMA_CM_EVENT_UNREACHABLE:
      return "the peer's connection manager did not answer: RoCE packets (UDP 4791) do not "
             "reach it, or nothing listens there";
    case RDMA_CM_EVENT_REJECTED:
      return "the peer rejected the connection: no listener on that port, or the server "
             "refused the session";
    case RDMA_CM_EVENT_CONNECT_ERROR:
      return "the connection failed while being established";
    case RDMA_CM_EVENT_DISCONNECTED:
      return "the peer disconnected";
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return "the RDMA device was removed";
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      return "the QP left its time-wait state";
    default:
      return "unexpected connection-manager event";
  }
}

}  // namespace rdmacheck::verbs
