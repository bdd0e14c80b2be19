#include "conn/tcp_probe.h"

#include <fmt/core.h>

#include <algorithm>

#include "conn/ack_timeout.h"
#include "conn/client_session.h"

namespace rdmacheck::conn {
namespace {

using Micros = std::chrono::duration<double, std::micro>;

constexpr int kMaxEchoes = 1000;
constexpr double kTcpMinRtoUs = 200000;  // Linux's TCP_RTO_MIN

}  // namespace

TcpProbeReport run_tcp_probe(const TcpProbeOptions& o) {
  TcpProbeReport r;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  auto done = [&]() {
    r.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return r;
  };
  auto sock = connect_to_server(o.target, end);
  if (!sock) {
    r.error = sock.error().error.message();
    return done();
  }
  r.connected = true;
  const std::string pad(std::min<uint32_t>(o.size, kMaxFrame / 2), 'x');
  std::vector<double> rtts;
  for (int i = 0; i < o.count && Clock::now() < end; ++i) {
    ++r.tally.sent;
    const auto t0 = Clock::now();
    if (auto s = send_frame(
            *sock,
            {{"type", proto::type_name(proto::MessageType::kTcpEcho)}, {"seq", i}, {"pad", pad}},
            end);
        !s) {
      r.error = s.error().message();
      break;
    }
    auto echo = recv_frame(*sock, end);
    if (!echo) {
      r.error = echo.error().message();
      break;
    }
    if (echo->value("seq", -1) != i) {
      r.error = fmt::format("echo {} came back as {}", i, echo->value("seq", -1));
      break;
    }
    ++r.tally.answered;
    rtts.push_back(Micros(Clock::now() - t0).count());
  }
  r.delayed = delayed_echoes(rtts);
  r.tally.size = static_cast<uint32_t>(pad.size());
  if (auto rtt = tcp_path_rtt(sock->fd())) r.retrans = rtt->total_retrans;
  if (!rtts.empty()) {
    std::sort(rtts.begin(), rtts.end());
    r.rtt_min_us = rtts.front();
    r.rtt_max_us = rtts.back();
    r.rtt_median_us = rtts[rtts.size() / 2];
  }
  return done();
}

int delayed_echoes(const std::vector<double>& rtts_us) {
  if (rtts_us.empty()) return 0;
  const double fastest = *std::min_element(rtts_us.begin(), rtts_us.end());
  return static_cast<int>(std::count_if(rtts_us.begin(), rtts_us.end(),
                                        [&](double t) { return t > fastest + kTcpMinRtoUs; }));
}

std::string describe(const TcpProbeReport& r) {
  if (!r.connected) return "TCP reference probe: could not connect: " + r.error;
  std::string out = fmt::format(
      "TCP {} B: {}/{} echoes, rtt min/median/max {:.1f}/{:.1f}/{:.1f} ms, {} segments "
      "retransmitted here, {} echoes 200 ms later than the fastest",
      r.tally.size, r.tally.answered, r.tally.sent, r.rtt_min_us / 1000, r.rtt_median_us / 1000,
      r.rtt_max_us / 1000, r.retrans, r.delayed);
  if (!r.error.empty()) out += " (" + r.error + ")";
  return out;
}

nlohmann::json to_json(const TcpProbeReport& r) {
  return {{"connected", r.connected},
          {"error", r.error},
          {"size", r.tally.size},
          {"sent", r.tally.sent},
          {"answered", r.tally.answered},
          {"rtt_min_us", r.rtt_min_us},
          {"rtt_median_us", r.rtt_median_us},
          {"rtt_max_us", r.rtt_max_us},
          {"retransmitted", r.retrans},
          {"delayed", r.delayed},
          {"lossy", r.lossy()},
          {"elapsed_ms", r.elapsed_ms}};
}

std::string answer_tcp_echo(const Channel& sock, const nlohmann::json& first, Deadline end) {
  nlohmann::json frame = first;
  for (int n = 0; n < kMaxEchoes; ++n) {
    if (auto s = send_frame(sock, frame, end); !s) return "echo failed: " + s.error().message();
    auto next = recv_frame(sock, end);
    if (!next) return fmt::format("echoed {} frames", n + 1);  // the client closed
    if (proto::type_of(*next) != proto::MessageType::kTcpEcho)
      return "bad message in a TCP echo session";
    frame = std::move(*next);
  }
  return fmt::format("stopped after {} echoes", kMaxEchoes);
}

}  // namespace rdmacheck::conn
