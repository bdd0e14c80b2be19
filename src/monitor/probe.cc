#include "monitor/probe.h"

#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <array>
#include <cctype>
#include <cerrno>

namespace rdmacheck::monitor {
namespace {

// Round trips from 10 us (a hardware fabric) to 2.5 s (past any RC retry).
const std::vector<double> kRttBounds = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
                                        1e-2, 2.5e-2, 5e-2, 0.1,  0.25,   0.5,  1.0,  2.5};

bool timed_out(int errnum) { return errnum == ETIMEDOUT || errnum == EAGAIN; }

// The path did not carry the connect: no answer at all, or an ICMP error.
bool path_error(int errnum) {
  return timed_out(errnum) || errnum == EHOSTUNREACH || errnum == ENETUNREACH;
}

void all_probes(ProbeResult& p, int count, bool lost) {
  p.sent = count;
  (lost ? p.lost : p.unanswered) = count;
  p.outcome = lost ? Outcome::kDown : Outcome::kStall;
}

// A round that failed before its probes: whether the stage it failed at
// says loss, a stall or nothing (P is filled and true returned), or the
// probes went out (false).
bool setup_failed(ProbeResult& p, const conn::ConnObservation& o, int count) {
  using conn::Stage;
  switch (o.failed) {
    case Stage::kTcpConnect:
      // Refused: the host is up and says no serve listens (an error of the
      // peer's setup, not a probe); no answer: the host or its path.
      if (path_error(o.errnum)) {
        all_probes(p, count, true);
      } else {
        p.outcome = Outcome::kError;
      }
      return true;
    case Stage::kAuth:
      // A serve that took the connection and never greeted is stalled (the
      // peer file names serve's port, so no other service is expected
      // there) when its kernel acknowledged all we sent; when our TCP had
      // to resend, the path was losing the handshake: lost. A refusal (the
      // key, the allow-list) is not a probe.
      if (o.auth == proto::AuthFailure::kSilent) {
        all_probes(p, count, o.tcp_resent > 0);
      } else {
        p.outcome = Outcome::kError;
      }
      return true;
    case Stage::kHandshake:
    case Stage::kQpSetup:
      // Went silent after the greeting: stalled (or lost, as above, when
      // our TCP resent); the server's own refusal is not a probe.
      if (timed_out(o.errnum) && !o.server_refused) {
        all_probes(p, count, o.tcp_resent > 0);
      } else {
        p.outcome = Outcome::kError;
      }
      return true;
    case Stage::kTraffic:
    case Stage::kDone:
      return false;
    default:  // options, resolve, local setup, cm connect: nothing was probed
      p.outcome = Outcome::kError;
      return true;
  }
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kUp:
      return "up";
    case Outcome::kLoss:
      return "loss";
    case Outcome::kDown:
      return "down";
    case Outcome::kStall:
      return "stall";
    case Outcome::kError:
      return "error";
  }
  return "error";
}

std::string wc_status_label(int status) {
  std::string out;
  for (const char c : std::string(ibv_wc_status_str(static_cast<ibv_wc_status>(status)))) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? fmt::format("status_{}", status) : out;
}

ProbeResult result_of(const std::string& peer, const conn::PingReport& r) {
  using conn::Stage;
  ProbeResult p;
  p.peer = peer;
  p.transport = std::string(name_of(r.options.transport));
  p.elapsed_s = r.elapsed_ms / 1000;
  if (r.obs.local) {
    p.device = r.obs.local->device;
    p.port = r.obs.local->port;
  }
  if (r.obs.wc_status && *r.obs.wc_status != IBV_WC_SUCCESS) p.wc_status = r.obs.wc_status;
  for (const auto& f : r.findings) {
    if (f.severity == Severity::kWarn || f.severity == Severity::kFail) p.findings.push_back(f);
  }
  const conn::ConnObservation& o = r.obs;
  if (o.failed != Stage::kDone) {
    p.stage = std::string(name_of(o.failed));
    p.error = o.error;
  }
  if (setup_failed(p, o, r.options.count)) return p;
  p.sent = o.pings_sent;
  p.answered = o.pings_ok;
  p.unanswered = o.pings_unanswered;
  p.lost = std::max(0, p.sent - p.answered - p.unanswered);
  for (const auto& s : r.samples) {
    p.rtt_s.push_back(s.rtt_us / 1e6);
    if (s.turnaround_us && p.turnaround_s.size() + 1 == p.rtt_s.size()) {
      p.turnaround_s.push_back(*s.turnaround_us / 1e6);
    }
  }
  if (p.sent == 0) {
    // The round's time ran out before its first probe could be answered
    // (conn/ping.cc counts no probe it cut short): nothing is known.
    p.outcome = Outcome::kError;
    p.stage = std::string(name_of(Stage::kTraffic));
    p.error = r.warnings.empty() ? "no probe fitted in the round's time" : r.warnings.back();
  } else if (p.unanswered > 0) {
    p.outcome = Outcome::kStall;
  } else if (p.lost == 0 && p.sent > 0) {
    p.outcome = Outcome::kUp;
  } else {
    p.outcome = p.answered > 0 ? Outcome::kLoss : Outcome::kDown;
  }
  return p;
}

ProbeResult probe(const Peer& peer, proto::Transport transport, const ProbeOptions& o) {
  conn::PingOptions p;
  p.target = o.target;
  p.target.host = peer.host;
  p.target.tcp_port = peer.port;
  p.transport = transport;
  p.count = o.count;
  p.interval_s = o.interval_s;
  p.ladder = false;
  p.timeout = o.timeout;
  p.ping_timeout = o.ping_timeout;
  p.probe = true;  // the peer's probe slots, and its turnaround in every echo
  return result_of(peer.name, conn::run_ping(p));
}

void declare_metrics(Registry& r) {
  r.declare("rdmacheck_probes_sent_total", MetricType::kCounter,
            "Probes sent to the peer (RDMA pings through its serve).");
  r.declare("rdmacheck_probes_lost_total", MetricType::kCounter,
            "Probes the path lost: never acknowledged, a datagram not echoed, or a connect "
            "that got no answer.");
  r.declare("rdmacheck_probes_unanswered_total", MetricType::kCounter,
            "Probes the peer's host left unanswered: an RC send its NIC acknowledged, or a "
            "connection its serve took, with no answer after: a host stall, not the network.");
  r.declare("rdmacheck_probe_rtt_seconds", MetricType::kHistogram,
            "Round trip of answered probes, in seconds.", kRttBounds);
  r.declare("rdmacheck_probe_turnaround_seconds", MetricType::kHistogram,
            "The responder's own share of an answered probe's round trip (its serve read the "
            "receive completion and posted the reply), as the responder measured it, in "
            "seconds.",
            kRttBounds);
  r.declare("rdmacheck_probe_network_rtt_seconds", MetricType::kHistogram,
            "Round trip of answered probes less the responder's turnaround: the network's and "
            "both NICs' share, in seconds.",
            kRttBounds);
  r.declare("rdmacheck_probe_errors_total", MetricType::kCounter,
            "Probe rounds that sent no probe, by the stage that failed (the key refused, no "
            "serve listening, no local device).");
  r.declare("rdmacheck_probe_completion_errors_total", MetricType::kCounter,
            "Probe rounds a failed work request ended, by its completion status (libibverbs' "
            "words: transport_retry_counter_exceeded is the path, a remote_* status the peer).");
  r.declare("rdmacheck_peer_up", MetricType::kGauge,
            "1 when the peer's last probe round got an answer, else 0.");
  r.declare("rdmacheck_probe_round_seconds", MetricType::kGauge,
            "How long the peer's last probe round took, connection setup included.");
  r.declare("rdmacheck_finding_active", MetricType::kGauge,
            "1 for each warning or failure the peer's last probe round found (id as `rdmacheck "
            "explain ID` prints it).");
}

void record(Registry& r, const std::string& prober, const ProbeResult& round) {
  const Labels l = {{"peer", round.peer}, {"prober", prober}, {"transport", round.transport}};
  if (round.outcome == Outcome::kError) {
    Labels e = l;
    e.emplace_back("stage", round.stage.empty() ? "unknown" : round.stage);
    r.add("rdmacheck_probe_errors_total", e);
  } else {
    r.add("rdmacheck_probes_sent_total", l, round.sent);
    r.add("rdmacheck_probes_lost_total", l, round.lost);
    r.add("rdmacheck_probes_unanswered_total", l, round.unanswered);
  }
  if (round.wc_status) {
    Labels w = l;
    w.emplace_back("status", wc_status_label(*round.wc_status));
    r.add("rdmacheck_probe_completion_errors_total", w);
  }
  for (double s : round.rtt_s) r.observe("rdmacheck_probe_rtt_seconds", l, s);
  for (size_t i = 0; i < round.turnaround_s.size() && i < round.rtt_s.size(); ++i) {
    r.observe("rdmacheck_probe_turnaround_seconds", l, round.turnaround_s[i]);
    r.observe("rdmacheck_probe_network_rtt_seconds", l,
              std::max(0.0, round.rtt_s[i] - round.turnaround_s[i]));
  }
  r.set("rdmacheck_peer_up", l, round.answered > 0 ? 1 : 0);
  r.set("rdmacheck_probe_round_seconds", l, round.elapsed_s);
  r.forget_matching("rdmacheck_finding_active", l);
  for (const auto& f : round.findings) {
    Labels fl = l;
    fl.emplace_back("id", std::string(id_name(f)));
    fl.emplace_back("severity", severity_name(f.severity));
    r.set("rdmacheck_finding_active", fl, 1);
  }
}

}  // namespace rdmacheck::monitor
