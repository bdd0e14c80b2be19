#include "conn/ack_timeout.h"

#include <fmt/core.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cmath>

namespace rdmacheck::conn {

std::optional<PathRtt> tcp_path_rtt(const Fd& sock) {
  tcp_info ti{};
  socklen_t len = sizeof ti;
  if (::getsockopt(sock.get(), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || ti.tcpi_rtt == 0) {
    return std::nullopt;
  }
  return PathRtt{static_cast<double>(ti.tcpi_rtt), static_cast<double>(ti.tcpi_rttvar),
                 ti.tcpi_total_retrans};
}

double AckTimeout::timeout_ms() const { return 4.096e-3 * std::ldexp(1.0, exponent); }

bool software_rdma(ibv_context* dev) {
  ibv_device_attr attr{};
  return dev != nullptr && ibv_query_device(dev, &attr) == 0 && attr.vendor_id == 0xFFFFFF;
}

uint8_t ack_timeout_exponent(double us, uint8_t floor) {
  uint8_t n = floor;
  while (n < 31 && 4.096 * std::ldexp(1.0, n) < us) ++n;
  return n;
}

AckTimeout choose_ack_timeout(const std::optional<PathRtt>& rtt, std::optional<uint8_t> user,
                              bool software) {
  AckTimeout a;
  a.rtt = rtt;
  a.software = software && !user;
  if (user) {
    a.exponent = *user;
    a.from_user = true;
  } else {
    // Without a measurement the floor still holds: a slow path must not retransmit.
    a.exponent = ack_timeout_exponent(rtt ? rtt->srtt_us + 4 * rtt->rttvar_us : 0,
                                      software ? kMinAckTimeoutSoftware : kMinAckTimeout);
  }
  return a;
}

verbs::RcTiming rc_timing_for(const Fd& sock, ibv_context* dev, verbs::RcTiming base) {
  base.timeout = choose_ack_timeout(tcp_path_rtt(sock), std::nullopt, software_rdma(dev)).exponent;
  return base;
}

std::string describe(const AckTimeout& a) {
  std::string out = fmt::format("{:.0f} ms (2^{} x 4.096 us)", a.timeout_ms(), a.exponent);
  if (a.from_user) return out + " set by --ack-timeout";
  const std::string floor = a.software ? " (software RDMA floor)" : "";
  if (!a.rtt) return out + ", the floor: no TCP round trip measured" + floor;
  return out +
         fmt::format(" from the TCP round trip {:.1f} ms +- {:.1f} ms", a.rtt->srtt_us / 1000,
                     a.rtt->rttvar_us / 1000) +
         floor;
}

nlohmann::json to_json(const AckTimeout& a) {
  return {{"exponent", a.exponent},
          {"timeout_ms", a.timeout_ms()},
          {"source", a.from_user ? "user" : (a.rtt ? "measured" : "floor")},
          {"software_floor", a.software},
          {"tcp_srtt_us", a.rtt ? nlohmann::json(a.rtt->srtt_us) : nlohmann::json(nullptr)},
          {"tcp_rttvar_us", a.rtt ? nlohmann::json(a.rtt->rttvar_us) : nlohmann::json(nullptr)}};
}

}  // namespace rdmacheck::conn
