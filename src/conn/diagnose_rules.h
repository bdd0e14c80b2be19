// conn/diagnose.cc's rules, one file per family (#23): each reads the
// observation and adds the findings its evidence supports. diagnose() is the
// driver that calls them in order; only it and the tests include this.
#pragma once

#include <vector>

#include "conn/diagnose.h"

namespace rdmacheck::conn {

// RC QPs reached RTS and packets were never acknowledged: the causes the
// evidence leaves standing, ranked (conn/diagnose_loss.cc).
void packets_lost(const ConnObservation& o, std::vector<Finding>& out);

// Why the server would not let this client in (proto/auth.h), and what to
// do (conn/diagnose_auth.cc).
Finding auth_finding(const ConnObservation& o);
// A session in certificate mode whose certificates end soon: a warning
// whatever else happened (conn/diagnose_auth.cc).
void note_certificate_expiry(const ConnObservation& o, std::vector<Finding>& out);

// A failure whose cause is what the user forced (-d, --ib-port, -x, --src)
// or where the server answered from (conn/diagnose_selection.cc).
void blame_user_selection(const ConnObservation& o, std::vector<Finding>& out);
void blame_forced_source(const ConnObservation& o, std::vector<Finding>& out);
void blame_peer_off_address(const ConnObservation& o, std::vector<Finding>& out);
void blame_cm_host(const ConnObservation& o, std::vector<Finding>& out);

}  // namespace rdmacheck::conn
