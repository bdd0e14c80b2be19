#include "serve/session.h"

#include <fmt/core.h>

#include <cerrno>
#include <mutex>
#include <optional>

#include "conn/ack_timeout.h"
#include "conn/cm_endpoint.h"
#include "conn/endpoint.h"
#include "conn/responder.h"
#include "conn/tcp_probe.h"
#include "doctor/doctor.h"
#include "doctor/sources.h"
#include "net/ip_match.h"
#include "net/tcp.h"
#include "perf/counters.h"
#include "perf/responder.h"
#include "perf/spec.h"
#include "perf/tcp_baseline.h"
#include "proto/auth.h"
#include "serve/hello_policy.h"
#include "serve/reflection.h"

namespace rdmacheck::serve {

std::pair<nlohmann::json, size_t> DoctorCache::report() {
  std::lock_guard<std::mutex> lock(mu_);
  if (made_ == Clock::time_point{} || Clock::now() - made_ > std::chrono::minutes(1)) {
    auto sources = doctor::sources_for(fs_);
    const auto r = doctor::run_doctor(fs_, *sources);
    const auto findings = r.findings();
    frame_ = proto::doctor_report(r.hostname, to_json(findings));
    count_ = findings.size();
    made_ = Clock::now();
  }
  return {frame_, count_};
}

namespace {

using conn::accept_cm_endpoint;
using conn::cm_accept;
using conn::connect_qp;
using conn::Endpoint;
using conn::EndpointOptions;
using conn::local_facts;
using conn::local_qp_info;
using conn::open_endpoint;

using Millis = std::chrono::duration<double, std::milli>;

struct SessionOutcome {
  std::string test;
  std::string outcome = "ok";
  uint64_t received = 0;
  uint64_t replied = 0;
  bool ok = false;        // a doctor report or TCP echo served (a test's is its outcome "ok")
  bool security = false;  // a key refused, or a record changed on the path
  bool counted = false;   // past the handshake (a scan or garbage never is)
  std::string note;       // what the session exposed beyond the usual (conn::Endpoint::iova_note)
};

// Our RC timing: the ACK timeout the client asked for (-u), else one that
// follows the round trip of the control connection SOCK, as the client's does.
verbs::RcTiming session_timing(const Channel& sock, ibv_context* dev, const proto::Hello& hello,
                               const ServerOptions& o) {
  verbs::RcTiming t = conn::rc_timing_for(sock.fd(), dev, o.timing);
  if (hello.test.ack_timeout != 0) t.timeout = hello.test.ack_timeout;
  return t;
}

// The session's endpoint over the TCP exchange, once opened (EP): QP up to
// RTS (path MTU capped by the client's -m), receives posted. Our echoes are
// RC requests too.
Status connect_oob(Endpoint& ep, const proto::Hello& hello, const ServerOptions& o,
                   const Channel& sock, proto::Welcome& welcome) {
  if (auto s = connect_qp(ep, hello.qp,
                          conn::path_mtu_limit(hello.facts.active_mtu, hello.test.path_mtu),
                          session_timing(sock, ep.verbs, hello, o), welcome.timeline);
      !s) {
    return s.error();
  }
  if (auto s = conn::post_receives(ep, hello.test.depth); !s) return s.error();
  welcome.facts = local_facts(ep);
  welcome.qp = local_qp_info(ep);
  return ok_status();
}

// --cm: waits for the client's connect request (matched by token), builds the
// endpoint on its device, posts receives and accepts.
Result<Endpoint> setup_cm(CmAcceptor& acceptor, uint64_t token, const EndpointOptions& eo,
                          const proto::Hello& hello, const ServerOptions& o, const Channel& sock,
                          Deadline end, std::vector<proto::Step>& timeline) {
  const Deadline d = std::min(end, deadline_in(std::chrono::seconds(15)));
  auto id = acceptor.wait(token, d, sock.fd().get());
  if (!id) {
    // Refused for where it came from: the timeline shows it too.
    if (id.error().errnum == EACCES) {
      timeline.push_back(proto::Step{"CONNECT_REQUEST", 0, false, id.error().context});
    }
    return id.error();
  }
  timeline.push_back(proto::Step{"CONNECT_REQUEST", 0, true, ""});
  auto ep = accept_cm_endpoint(eo, std::move(*id), timeline);
  if (!ep) return ep.error().error;
  if (auto s = conn::post_receives(*ep, hello.test.depth); !s) return s.error();
  const verbs::RcTiming timing = session_timing(sock, ep->verbs, hello, o);
  if (auto s = cm_accept(*ep, timing, d, timeline); !s) {
    return s.error().error;
  }
  return std::move(*ep);
}

// After a failed setup the client still reports; wait for its done (briefly).
void await_done(const Channel& sock, SessionOutcome& out) {
  auto frame = recv_frame(sock, deadline_in(std::chrono::seconds(10)));
  if (frame && proto::parse_done(*frame)) return;
  if (!frame) out.outcome += "; client went away: " + frame.error().message();
}

// An RDMA test on a server without RDMA: the refusal's code is doctor's
// finding id, so the client names the server's missing device, not a failure
// of the connection.
std::string no_rdma_refusal(const Finding& f) {
  return fmt::format("this server has no usable RDMA device: {} (fix there: {})", f.summary, f.fix);
}

void answer_doctor_request(DoctorCache& doctor, const Channel& sock, SessionOutcome& out) {
  const auto [frame, count] = doctor.report();
  out.test = "doctor";
  out.outcome = fmt::format("sent {} findings", count);
  out.ok = send_frame(sock, frame, deadline_in(std::chrono::seconds(5))).ok();
}

// What the server adds to its bye when something went wrong: its firewall's
// view of UDP 4791 (unless it shares nothing of its host: --no-share-doctor)
// and the QP's ERROR state.
void explain_failure(const Result<conn::Endpoint>& ep, const ServerOptions& o, Shared& shared,
                     proto::Bye& bye) {
  if (o.share_doctor) bye.firewall = shared.firewall.text();
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  if (ep && ibv_query_qp(ep->qp.get(), &attr, IBV_QP_STATE, &init) == 0 &&
      attr.qp_state == IBV_QPS_ERR) {
    bye.timeline.push_back(
        proto::Step{"ERROR", 0, false, bye.wc_errors.empty() ? "" : bye.wc_errors.front()});
  }
}

// Refuses the session with WHY and a CODE the client reads (a finding id,
// or proto::kRefusedQpSetup; none when empty).
void refuse_with_code(const Channel& sock, const std::string& why, const std::string& code,
                      SessionOutcome& out) {
  out.outcome = why;
  nlohmann::json refused = proto::error_message(why);
  if (!code.empty()) refused["code"] = code;
  (void)send_frame(sock, refused, deadline_in(std::chrono::seconds(1)));
}

// With --cm the welcome carries this device's facts and the token the
// client's connect request must bring (bound to its address); or why not.
std::optional<std::string> cm_welcome(const conn::EndpointOptions& eo, CmAcceptor& acceptor,
                                      proto::Welcome& welcome) {
  auto facts = conn::open_device_only(eo);
  if (!facts) return "server setup failed: " + facts.error().message();
  welcome.facts = conn::local_facts(*facts);
  const auto client = parse_ip(eo.peer_address);
  if (!client) return "server setup failed: no address for this client";
  welcome.cm_token = acceptor.expect(*client);
  return std::nullopt;
}

// A hello's test, from the endpoint to the bye.
void run_test(const proto::Hello& hello, const Channel& sock, const ServerOptions& o,
              CmAcceptor* acceptor, Admission::Ticket& ticket, Shared& shared, Deadline end,
              SessionOutcome& out) {
  // A refusal about the client's QP has its code (proto::kRefusedQpSetup) to tell it so.
  auto refuse = [&](const std::string& why, const std::string& code = "") {
    refuse_with_code(sock, why, code, out);
  };
  const conn::EndpointOptions eo = endpoint_options(hello, o, sock);
  // Both halves of the buffer count against the budget, before any is pinned.
  if (auto why = ticket.pin(conn::registered_bytes(eo))) return refuse(*why);
  // The test is valid and fits: only the device is missing.
  if (const auto& no = shared.no_rdma)
    return refuse(no_rdma_refusal(*no), std::string(id_name(*no)));
  const bool perf_test = hello.test.perf.has_value();
  proto::Welcome welcome{.probe = hello.test.probe};  // respond_ping stamps its turnaround
  std::optional<Result<conn::Endpoint>> setup;  // emplaced, never assigned: owners keep their order
  if (hello.test.cm) {
    if (auto why = cm_welcome(eo, *acceptor, welcome)) return refuse(*why);
  } else {
    setup.emplace(open_endpoint(eo, welcome.timeline));
    if (!*setup) return refuse("server setup failed: " + setup->error().message());
    if (auto why = reflected(**setup, hello, sock)) return refuse(*why, proto::kRefusedQpSetup);
    if (auto s = connect_oob(**setup, hello, o, sock, welcome); !s) {
      return refuse("server setup failed: " + s.error().message(), proto::kRefusedQpSetup);
    }
  }
  // Read before the client can start: after the welcome its traffic may begin.
  const FsRoot& fs = o.fs;
  perf::Counters before;
  if (perf_test && setup && *setup)
    before = perf::read_counters(fs, (*setup)->device, (*setup)->port);
  if (auto s = send_frame(sock, proto::to_json(welcome), deadline_in(std::chrono::seconds(5)));
      !s) {
    if (welcome.cm_token != 0) acceptor->cancel(welcome.cm_token);
    out.outcome = "client went away: " + s.error().message();
    return;
  }
  proto::Bye bye;
  if (hello.test.cm) {
    std::vector<proto::Step> cm_timeline;
    setup.emplace(setup_cm(*acceptor, welcome.cm_token, eo, hello, o, sock, end, cm_timeline));
    bye.timeline = cm_timeline;
    // Refused for where it came from (serve/cm_acceptor.h): the client's diagnosis says so.
    if (!*setup && setup->error().errnum == EACCES) bye.cm_refused = setup->error().context;
    // A perf test over rdma_cm still needs our buffer's address and key.
    if (*setup && perf_test) {
      const proto::Ready ready{conn::local_qp_info(**setup)};
      if (auto s = send_frame(sock, proto::to_json(ready), deadline_in(std::chrono::seconds(5)));
          !s) {
        out.outcome = "client went away: " + s.error().message();
        return;
      }
      before = perf::read_counters(fs, (*setup)->device, (*setup)->port);
    }
  }
  Result<conn::Endpoint>& ep = *setup;
  if (ep) {
    out.note = ep->iova_note;
    conn::SessionTraffic traffic(shared.traffic);
    const conn::ResponderOutcome r = perf_test
                                         ? perf::respond_perf(*ep, hello, sock, end, traffic, bye)
                                         : conn::respond_ping(*ep, hello, sock, end, traffic, bye);
    if (perf_test) {
      const perf::Counters d = perf::delta(before, perf::read_counters(fs, ep->device, ep->port));
      bye.counters.assign(d.begin(), d.end());
      if (bye.counters.size() > proto::kMaxCounters) bye.counters.resize(proto::kMaxCounters);
    }
    out.outcome = r.outcome;
    bye.received = r.received;
    bye.replied = r.replied;
  } else {
    out.outcome = "setup failed: " + ep.error().message();
    await_done(sock, out);
  }
  out.received = bye.received;
  out.replied = bye.replied;
  if (out.outcome != "ok" || !bye.wc_errors.empty()) explain_failure(ep, o, shared, bye);
  (void)send_frame(sock, proto::to_json(bye), deadline_in(std::chrono::seconds(2)));
  if (ep && ep->cm_id) rdma_disconnect(ep->cm_id.get());
}

// A test's hello: refused with the reason, or run.
void answer_hello(const nlohmann::json& frame, int id, const Channel& sock, const std::string& peer,
                  const ServerOptions& o, CmAcceptor* acceptor, Admission::Ticket& ticket,
                  Shared& shared, Log& log, Deadline end, SessionOutcome& out) {
  auto hello = proto::parse_hello(frame);
  if (!hello) {
    out.outcome = hello.error().message();
    (void)send_frame(sock, proto::error_message(out.outcome), deadline_in(std::chrono::seconds(1)));
    return;
  }
  out.test = fmt::format("{} {}/{}{}", hello->test.probe ? "probe" : name_of(hello->test.kind),
                         name_of(hello->test.transport), name_of(hello->test.op),
                         hello->test.cm ? " (rdma_cm)" : "");
  if (auto why = refusal(*hello, o, acceptor)) {
    out.outcome = *why;
    (void)send_frame(sock, proto::error_message(*why), deadline_in(std::chrono::seconds(1)));
    return;
  }
  log.line(fmt::format("session {} {} start: {} from {} ({} {})", id, peer, out.test,
                       hello->facts.hostname, hello->facts.device, hello->facts.gid));
  // From here the slot is held for as long as the client said its test takes.
  run_test(*hello, sock, o, acceptor, ticket, shared, request_end(*hello, end, Clock::now()), out);
}

}  // namespace

// One client: its first frame decides what it gets (a doctor report or a test).
// Returns the session's end line, which the caller logs once the slot is free.
SessionEnd session(int id, Channel& sock, const std::string& peer, const ServerOptions& o,
                   CmAcceptor* acceptor, Admission::Ticket& ticket, Shared& shared, Log& log) {
  const auto start = Clock::now();
  const Deadline end = start + o.session_timeout;
  std::string with_key;  // which key or identity the client proved, and TLS: for the log
  auto end_line = [&](const SessionOutcome& out) {
    return SessionEnd{
        fmt::format("session {} {} end: {} ({} received, {} replied, {:.0f} ms){}{}", id, peer,
                    out.outcome, out.received, out.replied, Millis(Clock::now() - start).count(),
                    with_key, out.note.empty() ? "" : "; " + out.note),
        out.ok || out.outcome == "ok", out.security, out.counted};
  };
  SessionOutcome out;
  // Nothing of the client's is read, and no verbs object made, before it has
  // proven a key (when this server has any).
  const Deadline handshake = std::min(end, deadline_in(o.handshake_timeout));
  auto key = proto::greet_client(sock, o.keys_now(), handshake);
  if (!key) {
    out.outcome = fmt::format("{}: {}", name_of(key.error().kind), key.error().error.message());
    out.security = key.error().kind == proto::AuthFailure::kFailed ||
                   key.error().kind == proto::AuthFailure::kRequired;
    return end_line(out);
  }
  if (!key->log_name.empty()) with_key = " [" + key->log_name + "]";
  // The client opens its device between the proof and its hello: a deadline of its own.
  auto frame = recv_frame(sock, std::min(end, deadline_in(o.handshake_timeout)));
  if (!frame) {
    out.outcome = "no valid handshake: " + frame.error().message();
    out.security = frame.error().errnum == EBADMSG;  // net/channel.cc: changed on the path
    return end_line(out);
  }
  // Past the handshake: the connection needs a session slot now.
  out.counted = true;
  // A monitor's probe takes a probe slot (serve/admission.h), never a test's.
  if (auto busy =
          proto::asks_probe(*frame) ? ticket.promote_probe() : ticket.promote(key->identity)) {
    out.outcome = *busy;
    (void)send_frame(sock, proto::error_message(*busy), deadline_in(std::chrono::seconds(1)));
    return end_line(out);
  }
  using proto::MessageType;
  // A frame of no known type is read as a hello: parse_hello says what it got.
  switch (proto::type_of(*frame).value_or(MessageType::kHello)) {
    case MessageType::kDoctorRequest:
      if (o.share_doctor) {
        answer_doctor_request(shared.doctor, sock, out);
        break;
      }
      out.test = "doctor";
      out.outcome = "doctor request refused (--no-share-doctor)";
      (void)send_frame(sock,
                       proto::error_message("this server does not share its doctor report "
                                            "(--no-share-doctor)"),
                       deadline_in(std::chrono::seconds(1)));
      break;
    case MessageType::kTcpEcho:  // check's TCP reference probe
      out.test = "tcp echo";
      out.outcome = conn::answer_tcp_echo(sock, *frame, end);
      out.ok = out.outcome.rfind("echoed ", 0) == 0;
      break;
    case MessageType::kTcpStream:  // check's TCP bandwidth reference
      out.test = "tcp stream";
      out.outcome = perf::answer_tcp_stream(sock, *frame, end);
      out.ok = out.outcome.rfind("streamed ", 0) == 0;
      break;
    default:
      answer_hello(*frame, id, sock, peer, o, acceptor, ticket, shared, log, end, out);
      break;
  }
  return end_line(out);
}

}  // namespace rdmacheck::serve
