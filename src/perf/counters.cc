#include "perf/counters.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace rdmacheck::perf {
namespace {

constexpr std::array kLoss = {
    // rxe
    "out_of_seq_request", "rcvd_seq_err", "completer_retry_err", "duplicate_request",
    "retry_exceeded_err",
    // mlx5
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "implied_nak_seq_err",
    "req_transport_retries_exceeded", "roce_slow_restart",
    // InfiniBand port counters
    "port_rcv_errors", "port_xmit_discards", "symbol_error", "link_error_recovery"};

constexpr std::array kCongestion = {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets",
                                    "rp_cnp_ignored", "port_xmit_wait"};

std::string leaf(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

template <size_t N>
bool in(const std::array<const char*, N>& names, const std::string& name) {
  const std::string l = leaf(name);
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return l == n; });
}

std::string evidence(const Counters& d, const std::string& host, bool (*pick)(const std::string&)) {
  std::string out;
  for (const auto& [name, v] : d) {
    if (!pick(name)) continue;
    out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, v);
  }
  return out.empty() ? "" : host + ": " + out;
}

uint64_t sum(const Counters& d, bool (*pick)(const std::string&)) {
  uint64_t s = 0;
  for (const auto& [name, v] : d) {
    if (pick(name)) s += v;
  }
  return s;
}

}  // namespace

Counters read_counters(const FsRoot& fs, const std::string& device, int port) {
  Counters c;
  for (const char* dir : {"hw_counters", "counters"}) {
    const std::string base = fmt::format("/sys/class/infiniband/{}/ports/{}/{}", device, port, dir);
    for (const auto& name : fs.list(base)) {
      if (name == "lifespan") continue;  // a setting (ms between updates), not a count
      const auto text = fs.read_line(base + "/" + name);
      if (!text || text->empty()) continue;
      uint64_t v = 0;
      const auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
      if (ec == std::errc() && p == text->data() + text->size()) {
        c[std::string(dir) + "/" + name] = v;
      }
    }
  }
  return c;
}

Counters delta(const Counters& before, const Counters& after) {
  Counters d;
  for (const auto& [name, v] : after) {
    auto it = before.find(name);
    if (it != before.end() && v > it->second) d[name] = v - it->second;
  }
  return d;
}

bool is_loss_counter(const std::string& name) { return in(kLoss, name); }
bool is_congestion_counter(const std::string& name) { return in(kCongestion, name); }

uint64_t packets(const Counters& d) {
  uint64_t p = 0;
  for (const char* n : {"hw_counters/sent_pkts", "hw_counters/rcvd_pkts",
                        "counters/port_xmit_packets", "counters/port_rcv_packets"}) {
    if (auto it = d.find(n); it != d.end()) p += it->second;
  }
  return p;
}

std::vector<Finding> counter_findings(const Counters& local, const Counters& peer,
                                      const std::string& local_host, const std::string& peer_host,
                                      uint64_t fallback_packets) {
  std::vector<Finding> out;
  // Each packet is counted once sent and once received; half the sum of both
  // sides is the number of packets on the wire.
  uint64_t pkts = (packets(local) + packets(peer)) / 2;
  const bool counted = pkts > 0;
  if (!counted) pkts = fallback_packets;
  auto per_million = [&](uint64_t events) {
    return pkts > 0 ? static_cast<double>(events) * 1e6 / static_cast<double>(pkts) : 0.0;
  };
  auto build = [&](const char* id, bool (*pick)(const std::string&), const std::string& what,
                   const std::string& fix) {
    const uint64_t events = sum(local, pick) + sum(peer, pick);
    if (events == 0) return;
    Finding f;
    f.id = id;
    f.severity = Severity::kWarn;
    f.layer = Layer::kPerformance;
    f.summary =
        fmt::format("{} during the test: {} events, {:.0f} per million packets ({} {})", what,
                    events, per_million(events), pkts,
                    counted ? "packets counted by the ports" : "messages, no packet counter");
    for (const auto* side : {&local, &peer}) {
      const std::string e = evidence(*side, side == &local ? local_host : peer_host, pick);
      if (!e.empty()) f.evidence.push_back(e);
    }
    f.fix = fix;
    out.push_back(std::move(f));
  };
  build("packet-loss-during-test", is_loss_counter, "packets were lost or retransmitted",
        "RoCE retransmits everything after a loss (go-back-N): find the drops (switch port "
        "counters, ethtool -S, netem/tc), and make the path lossless: PFC + ECN, RoCE traffic in "
        "its own priority");
  build("congestion-during-test", is_congestion_counter, "the path signalled congestion",
        "check ECN/PFC configuration and what else shares the path; spread the load");
  return out;
}

}  // namespace rdmacheck::perf
