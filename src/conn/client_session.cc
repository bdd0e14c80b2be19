#include "conn/client_session.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "conn/cm_endpoint.h"
#include "net/tcp.h"
#include "proto/auth.h"

namespace rdmacheck::conn {
namespace {

using std::chrono::seconds;

SessionFailure failure(Stage stage, Error e) {
  SessionFailure f;
  f.stage = stage;
  f.error = std::move(e);
  return f;
}

// A connection-manager failure: which event broke it (or the deadline); a
// local resource that could not be made is local setup.
SessionFailure cm_failure(const verbs::CmError& e) {
  SessionFailure f = failure(e.local ? Stage::kLocalSetup : Stage::kCmConnect, e.error);
  if (!e.local) f.cm_break = verbs::CmBreak{e.event, !e.event && e.error.errnum == ETIMEDOUT};
  return f;
}

// The server's next message, parsed as MSG; an error message from it comes
// back as an error in its own words, with *refused set.
template <typename Msg>
Result<Msg> receive(const Channel& sock, Deadline d, Result<Msg> (*parse)(const nlohmann::json&),
                    bool* refused, std::string* code = nullptr) {
  auto frame = recv_frame(sock, d);
  if (!frame) return frame.error();
  if (proto::type_of(*frame) == proto::MessageType::kError) {
    // The server's own refusal (server-refused), not a broken handshake.
    *refused = true;
    if (code != nullptr) *code = frame->value("code", "");
    return plain_error("peer", proto::error_text(*frame));
  }
  return parse(*frame);
}

// --cm: connect with the server's token; a perf test then learns where the
// server's buffer is (the connection manager's handshake does not say).
std::optional<SessionFailure> cm_establish(ClientSession& s, const SessionRequest& r,
                                           Deadline end) {
  if (s.welcome.cm_token == 0) {
    return failure(Stage::kHandshake, plain_error("handshake", "the server sent no rdma_cm token"));
  }
  const std::string token(reinterpret_cast<const char*>(&s.welcome.cm_token),
                          sizeof s.welcome.cm_token);
  const Deadline d = std::min(end, deadline_in(seconds(10)));
  if (auto c = cm_connect(*s.ep, token, s.timing(r.timing), d, s.local_timeline); !c) {
    return cm_failure(c.error());
  }
  if (!r.test.perf) return std::nullopt;
  bool refused = false;
  auto ready = receive(s.sock, d, proto::parse_ready, &refused);
  if (!ready) {
    SessionFailure f = failure(Stage::kHandshake, ready.error());
    f.server_refused = refused;
    return f;
  }
  s.welcome.qp = ready->qp;
  return std::nullopt;
}

// A second connection is tried only while the deadline leaves this much.
constexpr int kSecondTryMs = 2000;

// Whether a failed greeting may be what a path that lost packets for
// seconds does, and so worth one more connection: no greeting at all, or a
// connection that broke in the middle of it with an I/O error (a reset: the
// server's 5 s handshake deadline ran out during the outage). What the peer
// said (another version, a malformed greeting) is no outage: never again.
bool greeting_maybe_lost(const proto::AuthError& e) {
  return e.kind == proto::AuthFailure::kSilent ||
         (e.kind == proto::AuthFailure::kProtocol && e.error.errnum != 0);
}

// The segments this side's TCP resent on SOCK (TCP_INFO), 0 when unknown.
uint32_t resent_count(const Channel& sock) {
  const auto rtt = tcp_path_rtt(sock.fd());
  return rtt ? rtt->total_retrans : 0;
}

// What TCP_INFO counted of this side's retransmissions, for the warning.
std::string resent(const Channel& sock) {
  const uint32_t n = resent_count(sock);
  if (n == 0) return "";
  return fmt::format(", after TCP had resent {} segments on it", n);
}

}  // namespace

Result<Fd> connect_timing_out_once(const std::function<Result<Fd>(Deadline)>& connect, Deadline end,
                                   std::chrono::milliseconds wait, const std::string& what,
                                   std::vector<std::string>* retried) {
  // Silence: no SYN-ACK in time, or no ARP/ND answer (EHOSTUNREACH after
  // the kernel's probes). Refusals and missing routes are answers.
  const auto silent = [](const Error& e) {
    return e.errnum == ETIMEDOUT || e.errnum == EHOSTUNREACH;
  };
  auto sock = connect(std::min(end, deadline_in(wait)));
  if (sock || !silent(sock.error()) || ms_left(end) < kSecondTryMs) return sock;
  auto again = connect(std::min(end, deadline_in(wait)));
  if (!again) {
    if (silent(again.error())) again.error().context += ", on a second attempt too";
    return again;
  }
  if (retried != nullptr) {
    // No ARP answer is the path or a host not yet up; a SYN unanswered is the
    // path too, or a server whose accept queue was full (its kernel drops the
    // SYN), and the server's own counter tells that apart.
    const bool arp = sock.error().errnum == EHOSTUNREACH;
    retried->push_back(fmt::format(
        "{}: the first TCP connection attempt got no answer ({}) and a second connected: {}", what,
        std::strerror(sock.error().errnum),
        arp ? "no ARP/ND answer came for seconds (a flapping link, heavy loss, or a host that "
              "was only coming up)"
            : "the path lost packets for seconds (a flapping link, or heavy loss), or the "
              "server's accept queue was full (a stalled or flooded server: `nstat -az "
              "TcpExtListenOverflows` there counts the connections it dropped)"));
  }
  return again;
}

Result<Channel, SessionFailure> connect_to_server(const Target& t, Deadline end,
                                                  std::vector<std::string>* retried) {
  // The key first: a bad key file is this host's to fix, whatever the server says.
  std::optional<proto::Psk> key;
  if (!t.tls_cert.empty()) {
    auto certs = TlsCertContext::load({t.tls_cert, t.tls_key, t.tls_ca, ""}, false);
    if (!certs) {
      SessionFailure f = failure(Stage::kAuth, certs.error());
      f.auth = proto::AuthFailure::kKeyFileUnreadable;
      return f;
    }
    key = proto::Psk{t.tls_cert, "", "", *certs};
  } else if (!t.psk_file.empty()) {
    auto k = proto::load_psk(t.psk_file);
    if (!k) {
      SessionFailure f = failure(Stage::kAuth, k.error().error);
      f.auth = k.error().kind;
      return f;
    }
    key = std::move(*k);
  }
  auto addrs = resolve_host(t.host, t.tcp_port);
  if (!addrs) return failure(Stage::kResolve, addrs.error());
  const auto greeting_wait = t.greeting_wait;
  const auto connect = [&](Deadline d) { return tcp_connect(*addrs, d); };
  auto fd = connect_timing_out_once(connect, end, t.connect_wait,
                                    fmt::format("{}:{}", t.host, t.tcp_port), retried);
  if (!fd) return failure(Stage::kTcpConnect, fd.error());
  std::optional<Channel> sock(Channel(std::move(*fd)));
  uint32_t resent_before = 0;  // on a first connection given up for a second
  auto met = proto::meet_server(*sock, key, t.host, std::min(end, deadline_in(greeting_wait)));
  if (!met && ms_left(end) >= kSecondTryMs && greeting_maybe_lost(met.error())) {
    if (auto again = tcp_connect(*addrs, std::min(end, deadline_in(t.connect_wait)))) {
      const proto::AuthError first = met.error();
      const std::string first_resent = resent(*sock);
      resent_before = resent_count(*sock);
      sock.emplace(std::move(*again));
      met = proto::meet_server(*sock, key, t.host, std::min(end, deadline_in(greeting_wait)));
      if (!met && greeting_maybe_lost(met.error())) {
        met.error().error.context += ", on a second connection too";
      } else if (met && retried != nullptr) {
        retried->push_back(
            first.kind == proto::AuthFailure::kSilent
                ? fmt::format("{}:{} sent no greeting within {:.1f} s on the first TCP connection "
                              "and greeted on a second: the path lost packets for seconds (a "
                              "flapping link, or heavy loss), or the server stalled for seconds "
                              "(the timestamps of its log tell)",
                              t.host, t.tcp_port,
                              std::chrono::duration<double>(greeting_wait).count())
                : fmt::format(
                      "{}:{} broke the first TCP connection during the greeting ({}{}) "
                      "and greeted on a second: the path lost packets for seconds (a "
                      "flapping link, or heavy loss), or the server stalled or restarted (its "
                      "log tells)",
                      t.host, t.tcp_port, first.error.message(), first_resent));
      }
    }
  }
  if (!met) {
    const proto::AuthError& e = met.error();
    if (e.kind == proto::AuthFailure::kNone) {  // busy: the server's own refusal
      SessionFailure f = failure(Stage::kHandshake, e.error);
      f.server_refused = true;
      f.local_address = local_address(*sock);
      return f;
    }
    SessionFailure f = failure(Stage::kAuth, e.error);
    f.auth = e.kind;
    f.local_address = local_address(*sock);
    f.tcp_resent = resent_before + resent_count(*sock);
    return f;
  }
  return std::move(*sock);
}

std::optional<proto::Bye> ClientSession::farewell(const proto::Done& done, Deadline d) const {
  if (!send_frame(sock, proto::to_json(done), d)) return std::nullopt;
  auto frame = recv_frame(sock, d);
  if (!frame) return std::nullopt;
  auto bye = proto::parse_bye(*frame);
  if (!bye) return std::nullopt;
  return std::move(*bye);
}

namespace {

// The endpoint a session of R needs, on the path of the control connection SOCK.
EndpointOptions client_endpoint_options(const Target& t, const SessionRequest& r,
                                        const Channel& sock) {
  EndpointOptions eo;
  eo.fs = t.fs;
  eo.dev = t.dev;
  eo.local_address = local_address(sock);
  eo.peer_address = peer_address(sock);
  eo.src = t.src;
  eo.transport = r.test.transport;
  eo.buffer_size = r.test.max_size;
  eo.access = r.access;
  eo.depth = r.depth;
  eo.recv_slots = r.recv_slots;
  eo.inline_size = r.inline_size;
  eo.traffic_class = static_cast<uint8_t>(t.traffic_class);
  eo.tos = t.tos;
  eo.sl = static_cast<uint8_t>(t.sl);
  return eo;
}

// The hello of a session of R from endpoint EP: the test, with what the
// server's QP must share (priority, path MTU cap, ACK timeout) and the time
// left of this run.
proto::Hello client_hello(const Target& t, const SessionRequest& r, const EndpointOptions& eo,
                          const Endpoint& ep, Deadline end) {
  proto::Hello hello;
  hello.test = r.test;
  hello.test.cm = r.cm;
  hello.test.traffic_class = eo.traffic_class;  // the server's QP carries the same
  hello.test.sl = eo.sl;
  hello.test.path_mtu = static_cast<uint16_t>(t.path_mtu);  // the server's QP is capped the same
  hello.test.ack_timeout = r.ack_timeout.value_or(0);       // and, asked for, times out the same
  // What is left of this run: the server holds the session no longer (serve/hello_policy.h).
  hello.test.budget_ms = static_cast<uint32_t>(std::clamp(ms_left(end), 1, 86400000));
  hello.facts = local_facts(ep);
  hello.qp = local_qp_info(ep);
  if (!r.forged_gid.empty()) hello.qp.gid = r.forged_gid;
  return hello;
}

// What the device kept of -m and -S other than asked, as warnings.
void warn_of_kept_settings(const Target& t, ClientSession& s) {
  // -m is a ceiling: the ports' active MTUs may hold the path below it.
  if (t.path_mtu != 0 && s.ep->path_mtu != 0 && s.ep->path_mtu < t.path_mtu) {
    s.ep->warnings.push_back(
        fmt::format("-m {}: the path MTU is {} bytes, the smaller of the two ports' active MTUs "
                    "(this port {}, the server's {})",
                    t.path_mtu, s.ep->path_mtu, verbs::mtu_bytes(s.ep->port_attr.active_mtu),
                    s.welcome.facts.active_mtu));
  }
  // RoCE carries no service level: the priority is the traffic class (DSCP)
  // or the VLAN PCP. Say so when the device kept another SL than asked for.
  if (t.sl != 0 && s.ep->sl != t.sl) {
    s.ep->warnings.push_back(fmt::format(
        "-S {}: {} keeps service level {} on this {} port: RoCE carries no SL on the wire, its "
        "priority is the traffic class (-T, DSCP << 2) or the VLAN PCP",
        t.sl, s.ep->device, s.ep->sl,
        s.ep->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"));
  }
}

}  // namespace

Result<ClientSession, SessionFailure> open_client_session(const Target& t, const SessionRequest& r,
                                                          Deadline end) {
  std::vector<std::string> retried;
  auto sock = connect_to_server(t, end, &retried);
  if (!sock) return std::move(sock.error());
  ClientSession s{.sock = std::move(*sock)};
  s.cert_expiring = proto::expiring_certificates(s.sock, std::chrono::system_clock::now());
  const EndpointOptions eo = client_endpoint_options(t, r, s.sock);
  // The server is waiting for a hello: say why none comes.
  auto no_hello = [&](const Error& e) {
    (void)send_frame(s.sock, proto::error_message("client setup failed: " + e.message()),
                     deadline_in(seconds(1)));
  };
  auto with_timeline = [&](SessionFailure f) {
    f.local_timeline = s.local_timeline;
    f.local_address = eo.local_address;
    return f;
  };
  if (r.cm) {
    auto ep = open_cm_endpoint(eo, peer_address(s.sock), t.tcp_port,
                               std::min(end, deadline_in(seconds(10))), s.local_timeline);
    if (!ep) {
      no_hello(ep.error().error);
      return with_timeline(cm_failure(ep.error()));
    }
    s.ep = std::make_unique<Endpoint>(std::move(*ep));
  } else {
    auto ep = open_endpoint(eo, s.local_timeline);
    if (!ep) {
      no_hello(ep.error());
      return with_timeline(failure(Stage::kLocalSetup, ep.error()));
    }
    s.ep = std::make_unique<Endpoint>(std::move(*ep));
  }
  s.ep->warnings.insert(s.ep->warnings.end(), retried.begin(), retried.end());
  const proto::Hello hello = client_hello(t, r, eo, *s.ep, end);
  auto fail_with = [&](SessionFailure f, bool keep_session) {
    f.tcp_resent = resent_count(s.sock);
    f.local = hello.facts;
    f.warnings = s.ep->warnings;
    f.local_timeline = s.local_timeline;
    f.local_address = eo.local_address;
    if (keep_session) {
      f.peer = s.welcome.facts;
      f.session = std::make_unique<ClientSession>(std::move(s));
    }
    return f;
  };
  if (r.before_hello) {
    if (auto b = r.before_hello(*s.ep); !b) {
      return fail_with(failure(Stage::kLocalSetup, b.error()), false);
    }
  }
  const Deadline hs = std::min(end, deadline_in(seconds(10)));
  if (auto sent = send_frame(s.sock, proto::to_json(hello), hs); !sent) {
    return fail_with(failure(Stage::kHandshake, sent.error()), false);
  }
  bool refused = false;
  std::string code;
  auto welcome = receive(s.sock, hs, proto::parse_welcome, &refused, &code);
  if (!welcome) {
    SessionFailure f = failure(Stage::kHandshake, welcome.error());
    f.server_refused = refused;
    f.refusal_code = code;
    return fail_with(std::move(f), false);
  }
  s.welcome = std::move(*welcome);
  // The ACK timeout follows the round trip TCP measured over the handshake.
  s.ack = choose_ack_timeout(tcp_path_rtt(s.sock.fd()), r.ack_timeout, software_rdma(s.ep->verbs));
  if (r.cm) {
    if (auto f = cm_establish(s, r, end)) return fail_with(std::move(*f), true);
  } else if (auto c = connect_qp(*s.ep, s.welcome.qp,
                                 path_mtu_limit(s.welcome.facts.active_mtu, t.path_mtu),
                                 s.timing(r.timing), s.local_timeline);
             !c) {
    return fail_with(failure(Stage::kQpSetup, c.error()), true);
  }
  warn_of_kept_settings(t, s);
  return s;
}

}  // namespace rdmacheck::conn
