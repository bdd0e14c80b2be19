// A bw/lat run's setup, apart from its measuring (perf/client.cc): one
// session per queue pair, the link it runs on, and what a failed setup
// means. Internal to perf/.
#pragma once

#include <vector>

#include "base/deadline.h"
#include "conn/client_session.h"
#include "findings/finding.h"
#include "perf/client.h"

namespace rdmacheck::perf {

// Marks R failed at STAGE with E.
void fail(PerfReport& r, conn::Stage stage, const Error& e);

// A run that failed before measuring gets the connection layer's diagnosis
// (server not listening, peer unreachable, memlock, ...), as ping does. One
// that failed while measuring gets it only where what the user forced (-d,
// --ib-port, -x, --cm --src) explains the failure: the traffic's own errors
// speak for themselves.
std::vector<Finding> diagnose_setup(const PerfReport& r, const PerfOptions& o);

// One queue pair's session: TCP, endpoint, hello/welcome and the QP to RTS;
// false (R says why) when it could not be opened.
bool open_session(PerfReport& r, const PerfOptions& o, Deadline end, uint32_t seed,
                  conn::ClientSession& s);

// The link a test runs on, from its endpoint and the path MTU the QP took.
LinkFacts link_facts(const conn::Endpoint& ep, int mtu);

}  // namespace rdmacheck::perf
