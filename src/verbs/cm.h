// librdmacm owners (event channel, CM id) and a deadline-bound event wait, in
// the style of ibv.h. CM events are the connection setup rping and most
// applications use; each one's latency is recorded (like rdma-core's cmtime).
#pragma once

#include <rdma/rdma_cma.h>

#include <memory>
#include <optional>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "verbs/ibv.h"

namespace rdmacheck::verbs {

using CmChannelPtr =
    std::unique_ptr<rdma_event_channel, Deleter<rdma_event_channel, rdma_destroy_event_channel>>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, Deleter<rdma_cm_id, rdma_destroy_id>>;

// A channel whose fd is non-blocking, so waits can honour deadlines.
Result<CmChannelPtr> create_event_channel();
Result<CmIdPtr> create_cm_id(rdma_event_channel* ch);

struct CmEvent {
  rdma_cm_event_type type = RDMA_CM_EVENT_ADDR_ERROR;
  int status = 0;
  CmIdPtr id;                // for CONNECT_REQUEST: the new connection's id, owned
  std::string private_data;  // for CONNECT_REQUEST
};

// A connection-manager step that failed, typed for diagnosis: the event that
// broke it (none when a call failed or the deadline passed), and whether the
// step was the manager's (address, route, connect) or a local resource.
struct CmError {
  Error error;
  std::optional<rdma_cm_event_type> event;
  bool local = false;  // creating a channel, id or resources: not the path's fault

  // "UNREACHABLE", "timeout", or "" for a failed call.
  [[nodiscard]] std::string event_name() const;
};

// What broke an rdma_cm setup, for diagnosis: the event that came instead of
// the one expected, or the deadline. Empty when neither (a call failed).
struct CmBreak {
  std::optional<rdma_cm_event_type> event;
  bool timeout = false;
  [[nodiscard]] bool happened() const { return event.has_value() || timeout; }
  [[nodiscard]] bool is(rdma_cm_event_type t) const { return event == t; }
  [[nodiscard]] std::string name() const;  // "UNREACHABLE", "timeout", ""
};

// The next event on the channel, acknowledged, or ETIMEDOUT at the deadline.
Result<CmEvent> next_cm_event(rdma_event_channel* ch, Deadline d);
// Waits for `want`; any other event is an error naming it and its meaning.
Result<CmEvent, CmError> expect_cm_event(rdma_event_channel* ch, rdma_cm_event_type want,
                                         Deadline d, const std::string& context);

// "RDMA_CM_EVENT_UNREACHABLE" -> "UNREACHABLE"
std::string cm_event_short_name(rdma_cm_event_type t);
// What an error event means for someone debugging the link.
std::string cm_event_meaning(rdma_cm_event_type t);

}  // namespace rdmacheck::verbs
