// --cm: an endpoint whose RC QP librdmacm brings up (address, route, connect),
// as rping and most applications do. Failures are typed (verbs::CmError): the
// event that broke a step, or a local resource that could not be made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/result.h"
#include "conn/endpoint.h"
#include "proto/messages.h"
#include "verbs/cm.h"
#include "verbs/qp.h"

namespace rdmacheck::conn {

using CmStatus = Result<Unit, verbs::CmError>;

// Client side: resolves ADDR:PORT (address, then route; each step timed), then
// creates the resources on the device the route chose.
Result<Endpoint, verbs::CmError> open_cm_endpoint(const EndpointOptions& o, const std::string& addr,
                                                  uint16_t port, Deadline d,
                                                  std::vector<proto::Step>& timeline);
// Server side: takes a connection request's id onto its own channel and
// creates the resources on its device.
Result<Endpoint, verbs::CmError> accept_cm_endpoint(const EndpointOptions& o, verbs::CmIdPtr id,
                                                    std::vector<proto::Step>& timeline);
// Connects (client) or accepts (server) and waits for ESTABLISHED.
CmStatus cm_connect(Endpoint& ep, const std::string& private_data, const verbs::RcTiming& t,
                    Deadline d, std::vector<proto::Step>& timeline);
CmStatus cm_accept(Endpoint& ep, const verbs::RcTiming& t, Deadline d,
                   std::vector<proto::Step>& timeline);

}  // namespace rdmacheck::conn
