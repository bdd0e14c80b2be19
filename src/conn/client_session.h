// The one way a client (ping, bw, lat, check) opens a session with
// `rdmacheck serve`: TCP connect, its endpoint (or rdma_cm's address and
// route), hello/welcome, and the QP to RTS (or rdma_cm's connect). A failure
// says at which stage, as a type, so that diagnosis never reads strings.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "base/result.h"
#include "conn/ack_timeout.h"
#include "conn/diagnose.h"
#include "conn/endpoint.h"
#include "conn/target.h"
#include "net/channel.h"
#include "proto/messages.h"
#include "verbs/qp.h"

namespace rdmacheck::conn {

// What the client asks of the session beyond the target.
struct SessionRequest {
  proto::TestSpec test;                // sent in the hello; test.max_size sizes our buffer
  bool cm = false;                     // connect through librdmacm (RC only)
  int access = 0;                      // remote access of our buffer (IBV_ACCESS_REMOTE_*)
  uint32_t depth = 1;                  // our work-request depth
  uint32_t recv_slots = 1;             // receive buffers of test.max_size (EndpointOptions)
  uint32_t inline_size = 0;            // largest message posted inline
  verbs::RcTiming timing;              // its ACK timeout is derived from the round trip, unless:
  std::optional<uint8_t> ack_timeout;  // the user's --ack-timeout, taken as is
  // Runs on our endpoint before the hello goes out (e.g. receives the server's
  // first messages need); a failure counts as local setup.
  std::function<Status(Endpoint&)> before_hello;
  // Test-only (ping's hidden --forge-gid): a hello that names this GID instead
  // of ours, as an attacker aiming the server at a third host would send.
  std::string forged_gid;
};

struct ClientSession {
  Channel sock;  // the control connection: TLS with a key ring line
  std::unique_ptr<Endpoint> ep;
  proto::Welcome welcome;  // with --cm perf tests, qp is the server's ready
  std::vector<proto::Step> local_timeline;
  AckTimeout ack;                          // the RC ACK timeout chosen for this session, and why
  std::vector<std::string> cert_expiring;  // proto::expiring_certificates at the meeting
  // BASE with the chosen ACK timeout.
  [[nodiscard]] verbs::RcTiming timing(verbs::RcTiming base) const {
    base.timeout = ack.exponent;
    return base;
  }

  // Tells the server we are done and returns its bye (nullopt when it has none).
  std::optional<proto::Bye> farewell(const proto::Done& done, Deadline d) const;
};

struct SessionFailure {
  Stage stage = Stage::kLocalSetup;
  Error error;
  verbs::CmBreak cm_break;      // kCmConnect: the event that broke it, or the deadline
  bool server_refused = false;  // kHandshake: the server answered with its own error message
  std::string refusal_code;     // its "code", a finding id about the server ("no-rdma-device")
  proto::AuthFailure auth = proto::AuthFailure::kNone;  // kAuth: why
  std::optional<proto::HostFacts> local;                // what each side said before the failure
  std::optional<proto::HostFacts> peer;
  std::vector<std::string> warnings;
  std::vector<proto::Step> local_timeline;  // our QP's steps up to the failure
  std::string local_address;                // ours towards the peer, once TCP connected
  // Segments this side's TCP resent on the control connection before the
  // failure (TCP_INFO; both connections when a greeting was asked twice):
  // a silent server behind a path that loses packets shows them, a stalled
  // server whose kernel acknowledged everything does not.
  uint32_t tcp_resent = 0;
  // From the welcome on the server holds a session: the caller may still say
  // done and read its bye (peer timeline, firewall view) before closing it.
  std::unique_ptr<ClientSession> session;
};

// The one way to reach a server: its key (when the target has one), TCP, and
// the greeting and key proof (or TLS). Every client connection (tests, check's doctor
// request and TCP probe) starts here. Fails at kResolve, kTcpConnect or kAuth
// (a server that refused without an auth code, e.g. busy: kHandshake, refused).
// A listener that stays silent is asked once more on a new connection while
// the deadline allows: a path that drops packets for seconds (a flapping
// link) can lose a greeting, and TCP's backoff can miss its up windows; a
// second silence is the listener's. A greeting that came only the second time
// is said in RETRIED (when given): the path lost packets for seconds.
//
// A connect that got no answer (no SYN-ACK within Target::connect_wait, or
// no ARP/ND reply: EHOSTUNREACH) is tried once more the same way, for the
// same reason: a flap can eat every SYN or ARP request of one wait. Refusals
// and missing routes are answers: never tried again.
Result<Channel, SessionFailure> connect_to_server(const Target& t, Deadline end,
                                                  std::vector<std::string>* retried = nullptr);

// That connect step on its own: CONNECT(deadline) once, and once more when it
// got no answer and END leaves 2 s after it, each waiting up to WAIT. A
// second silence says ", on a second attempt too"; a second attempt that
// connects is said in RETRIED (when given), naming WHAT.
Result<Fd> connect_timing_out_once(const std::function<Result<Fd>(Deadline)>& connect, Deadline end,
                                   std::chrono::milliseconds wait, const std::string& what,
                                   std::vector<std::string>* retried);

Result<ClientSession, SessionFailure> open_client_session(const Target& t, const SessionRequest& r,
                                                          Deadline end);

}  // namespace rdmacheck::conn
