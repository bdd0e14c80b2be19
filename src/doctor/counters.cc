// Hardware counters: any error counter above zero is shown with what it means;
// congestion counters (CNP/ECN) above zero are shown as information.
#include "doctor/counters.h"

#include <fmt/core.h>

#include <charconv>
#include <map>

#include "doctor/check.h"
#include "findings/port_subject.h"

namespace rdmacheck::doctor {
namespace {

using K = CounterKind;

const std::map<std::string, CounterMeaning>& table() {
  static const std::map<std::string, CounterMeaning> t = {
      // Soft-RoCE (drivers/infiniband/sw/rxe/rxe_hw_counters.c)
      {"duplicate_request",
       {K::kError,
        "requests received twice: the peer retransmitted, so a "
        "packet or its ACK was lost"}},
      {"out_of_seq_request",
       {K::kError,
        "requests arrived with a PSN gap: packets were lost on "
        "the way in (go-back-N retransmission follows)"}},
      {"rcvd_rnr_err", {K::kError, "RNR NAKs received: the peer had no receive buffer posted"}},
      {"send_rnr_err",
       {K::kError,
        "RNR NAKs sent: a SEND arrived before the application posted "
        "a receive"}},
      {"rcvd_seq_err",
       {K::kError,
        "sequence-error NAKs received: the peer saw a PSN gap in "
        "what this side sent (loss towards the peer)"}},
      {"retry_exceeded_err",
       {K::kError,
        "QPs gave up after the transport retry count: the peer "
        "never ACKed (firewall, peer gone, heavy loss)"}},
      {"retry_rnr_exceeded_err",
       {K::kError,
        "QPs gave up after RNR retries: the peer never "
        "posted receives"}},
      {"completer_retry_err", {K::kError, "retransmissions after an ACK timeout or NAK"}},
      {"send_err", {K::kError, "packets the netdev refused to send"}},
      {"link_downed", {K::kError, "times the link went down"}},
      // mlx5 (drivers/infiniband/hw/mlx5/counters.c), NVIDIA's counter documentation
      {"out_of_buffer",
       {K::kError,
        "packets dropped because the receive queue was empty (no "
        "receive WQE posted)"}},
      {"out_of_sequence",
       {K::kError,
        "packets arrived with a PSN gap: loss on the path; the "
        "sender retransmits go-back-N"}},
      {"rnr_nak_retry_err",
       {K::kError,
        "RNR NAK retries exhausted: the peer had no receive "
        "posted"}},
      {"packet_seq_err",
       {K::kError,
        "sequence-error NAKs received: the peer saw a PSN gap (loss "
        "towards the peer)"}},
      {"implied_nak_seq_err",
       {K::kError,
        "read/atomic responses skipped PSNs (implied NAK): "
        "loss, then retransmission"}},
      {"local_ack_timeout_err",
       {K::kError,
        "ACK timeouts: the peer did not acknowledge in time "
        "(drops, a congested or dead peer)"}},
      {"resp_local_length_error",
       {K::kError,
        "a message longer than the posted receive buffer "
        "arrived"}},
      {"resp_cqe_error", {K::kError, "receive-side work requests completed with an error"}},
      {"req_cqe_error", {K::kError, "send-side work requests completed with an error"}},
      {"req_remote_invalid_request",
       {K::kError,
        "the peer rejected requests as invalid (opcode "
        "or length it does not accept)"}},
      {"req_remote_access_errors",
       {K::kError,
        "the peer refused RDMA access (wrong rkey, "
        "address or permissions)"}},
      {"resp_remote_access_errors",
       {K::kError,
        "this side refused a peer's RDMA access (rkey, "
        "address or permissions)"}},
      {"resp_cqe_flush_error",
       {K::kError,
        "receive work requests flushed: their QP went to "
        "ERROR"}},
      {"req_cqe_flush_error", {K::kError, "send work requests flushed: their QP went to ERROR"}},
      {"req_transport_retries_exceeded",
       {K::kError,
        "QPs gave up after the transport retry "
        "count"}},
      {"req_rnr_retries_exceeded", {K::kError, "QPs gave up after RNR retries"}},
      {"rx_icrc_encapsulated",
       {K::kError,
        "RoCE packets with a bad ICRC: corruption, or a "
        "middlebox rewriting packets"}},
      {"roce_adp_retrans", {K::kError, "adaptive retransmissions (packets were lost)"}},
      {"roce_adp_retrans_to", {K::kError, "adaptive retransmission timeouts"}},
      {"roce_slow_restart", {K::kError, "slow restarts after retransmission timeouts"}},
      {"np_cnp_sent",
       {K::kCongestion,
        "CNPs sent: ECN-marked packets reached this host, and it "
        "told their senders to slow down"}},
      {"np_ecn_marked_roce_packets",
       {K::kCongestion,
        "ECN-marked RoCE packets received: "
        "switches signalled congestion"}},
      {"rp_cnp_handled", {K::kCongestion, "CNPs this host acted on by slowing down (DCQCN)"}},
      {"rp_cnp_ignored", {K::kCongestion, "CNPs this host received but ignored"}},
      // InfiniBand PortCounters (ports/N/counters, sysfs-class-infiniband)
      {"symbol_error",
       {K::kError,
        "symbol errors on the physical link: cable, optic or "
        "connector"}},
      {"port_rcv_errors", {K::kError, "received packets with errors (bad CRC, length, VL)"}},
      {"port_rcv_remote_physical_errors",
       {K::kError,
        "received packets marked bad by an upstream "
        "link"}},
      {"port_rcv_switch_relay_errors", {K::kError, "packets a switch could not relay"}},
      {"link_error_recovery", {K::kError, "times the link retrained after errors"}},
      {"port_xmit_discards", {K::kError, "outbound packets discarded (port down or congested)"}},
      {"port_xmit_constraint_errors",
       {K::kError,
        "outbound packets dropped by partition/"
        "filtering rules"}},
      {"port_rcv_constraint_errors",
       {K::kError,
        "inbound packets dropped by partition/filtering "
        "rules"}},
      {"local_link_integrity_errors", {K::kError, "local physical errors past the threshold"}},
      {"excessive_buffer_overrun_errors",
       {K::kError,
        "receive buffer overruns (flow control "
        "broken)"}},
      {"VL15_dropped", {K::kError, "subnet management packets dropped"}},
      {"port_xmit_wait",
       {K::kCongestion,
        "ticks with data to send but no credits: congestion "
        "downstream"}},
  };
  return t;
}

std::optional<uint64_t> to_u64(const std::string& s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

CounterMeaning counter_meaning(const std::string& name) {
  if (auto it = table().find(name); it != table().end()) return it->second;
  // Drivers add counters over time; names that say error are treated as errors.
  for (const char* word : {"err", "drop", "discard"}) {
    if (name.find(word) != std::string::npos) {
      return {K::kError, "a driver error counter (no description known to rdmacheck)"};
    }
  }
  return {};
}

std::vector<CheckResult> check_counters(const Machine& m) {
  std::vector<CheckResult> out;
  for (const auto& d : m.devices) {
    for (const auto& p : d.ports) {
      CheckResult c{.check = "counters",
                    .layer = Layer::kPerformance,
                    .subject = port_subject(d.name, p.port)};
      const std::string base = fmt::format("/sys/class/infiniband/{}/ports/{}", d.name, p.port);
      std::vector<std::string> errors;
      std::vector<std::string> congestion;
      int read = 0;
      for (const char* dir : {"hw_counters", "counters"}) {
        for (const auto& name : m.fs.list(base + "/" + dir)) {
          if (name == "lifespan") continue;  // the refresh interval in ms, not a counter
          const auto v = to_u64(m.fs.read_line(base + "/" + dir + "/" + name).value_or(""));
          if (!v) continue;
          ++read;
          const auto meaning = counter_meaning(name);
          if (*v == 0 || meaning.kind == K::kTraffic) continue;
          const std::string line = fmt::format("{}/{} = {}: {}", dir, name, *v, meaning.meaning);
          (meaning.kind == K::kError ? errors : congestion).push_back(line);
        }
      }
      c.fact("counters_read", read);
      c.fact("errors_nonzero", errors.size());
      if (!errors.empty()) {
        auto& f = c.add(Severity::kWarn, FindingId::kErrorCountersNonzero,
                        fmt::format("{} port {} has {} error counter{} above zero", d.name, p.port,
                                    errors.size(), errors.size() == 1 ? "" : "s"));
        f.evidence = errors;
        f.evidence.push_back(
            "counted since the driver loaded: run rdmacheck doctor again after "
            "a test to see which ones move");
        f.fix =
            "sequence/retry errors mean packet loss on the path: check the switch's drop "
            "counters and enable PFC/ECN; RNR errors mean the application posts receives too "
            "late; access errors are application bugs";
      }
      if (!congestion.empty()) {
        auto& f =
            c.add(Severity::kInfo, FindingId::kCongestionCountersNonzero,
                  fmt::format("{} port {} saw congestion signalling (ECN/CNP)", d.name, p.port));
        f.evidence = congestion;
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace rdmacheck::doctor
