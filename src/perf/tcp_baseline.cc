#include "perf/tcp_baseline.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "conn/client_session.h"
#include "conn/tcp_probe.h"
#include "net/tcp.h"
#include "perf/cpu_time.h"
#include "perf/units.h"

namespace rdmacheck::perf {
namespace {

constexpr size_t kChunk = size_t{128} * 1024;
constexpr double kMaxSeconds = 10;  // a client may ask for at most this much streaming

using Seconds = std::chrono::duration<double>;

// Waits until FD is ready for EVENTS or the deadline passes.
bool wait_for(const Fd& fd, short events, Deadline d) {
  pollfd p{fd.get(), events, 0};
  const int ms = std::max(ms_left(d), 0);
  return ::poll(&p, 1, ms) > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
}

// Streams zeros for SECONDS; returns the bytes written, or an error.
Result<uint64_t> stream(const Fd& sock, double seconds, Deadline end) {
  const std::vector<char> chunk(kChunk, 0);
  const auto stop = Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(seconds));
  uint64_t sent = 0;
  while (Clock::now() < stop) {
    if (!wait_for(sock, POLLOUT, std::min(end, stop))) continue;
    const ssize_t n = ::send(sock.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) return errno_error("send", "TCP stream");
    sent += static_cast<uint64_t>(n);
  }
  if (::shutdown(sock.get(), SHUT_WR) != 0) return errno_error("shutdown", "TCP stream");
  return sent;
}

}  // namespace

TcpBaseline run_tcp_baseline(const TcpBaselineOptions& o) {
  TcpBaseline b;
  const auto start = Clock::now();
  const Deadline end = start + o.timeout;
  auto done = [&]() {
    b.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return b;
  };
  // Latency first: a short echo session of its own.
  conn::TcpProbeOptions echo;
  echo.target = o.target;
  echo.count = o.round_trips;
  echo.size = 1;
  // A sample, not a test: on a slow path (20 ms of delay) the echoes that fit
  // in 3 s are enough, and the stream still runs.
  echo.timeout = std::min(o.timeout / 4, std::chrono::milliseconds(3000));
  const auto e = conn::run_tcp_probe(echo);
  b.echoes = e.tally.answered;
  b.half_rtt_min_us = e.rtt_min_us / 2;
  b.half_rtt_median_us = e.rtt_median_us / 2;
  if (!e.connected || e.tally.answered == 0) {
    b.error = "TCP echoes: " + e.error;
    return done();
  }
  auto sock = conn::connect_to_server(o.target, end);
  if (!sock) {
    b.error = "TCP stream: " + sock.error().error.message();
    return done();
  }
  if (auto s = send_frame(
          *sock,
          {{"type", proto::type_name(proto::MessageType::kTcpStream)}, {"seconds", o.seconds}},
          end);
      !s) {
    b.error = "TCP stream: " + s.error().message();
    return done();
  }
  auto ready = recv_frame(*sock, end);
  if (!ready || proto::type_of(*ready) != proto::MessageType::kTcpStreamReady) {
    b.error =
        "TCP stream: the server did not start it" +
        (ready ? ": " + ready->value("message", ready->dump()) : ": " + ready.error().message());
    return done();
  }
  const CpuClock clock;
  // The bulk bytes go on the socket itself, outside TLS (the baseline is
  // TCP's throughput, not a cipher's); the result comes back inside it.
  auto sent = stream(sock->fd(), o.seconds, end);
  b.client_cpu_s = clock.cpu_s();
  b.client_wall_s = clock.wall_s();
  if (!sent) {
    b.error = "TCP stream: " + sent.error().message();
    return done();
  }
  auto result = recv_frame(*sock, end);
  if (!result || proto::type_of(*result) != proto::MessageType::kTcpStreamResult) {
    b.error = "TCP stream: no result from the server" +
              (result ? std::string() : ": " + result.error().message());
    return done();
  }
  b.bytes = result->value("bytes", uint64_t{0});
  b.seconds = result->value("seconds", 0.0);
  b.server_cpu_s = result->value("cpu_s", 0.0);
  b.server_wall_s = result->value("wall_s", 0.0);
  b.gbps = b.seconds > 0 ? static_cast<double>(b.bytes) * 8 / b.seconds / 1e9 : 0;
  if (b.bytes != *sent) {
    b.error = fmt::format("TCP stream: sent {} bytes, the server counted {}", *sent, b.bytes);
    return done();
  }
  b.ok = true;
  return done();
}

std::string describe(const TcpBaseline& b) {
  std::string out;
  if (b.bytes > 0) {
    out += fmt::format(
        "TCP stream {:.1f} s: {}, CPU {:.0f} % of a core here (sender), {:.0f} % on the "
        "server (receiver)",
        b.seconds, gbps_text(b.gbps), cpu_percent(b.client_cpu_s, b.client_wall_s),
        cpu_percent(b.server_cpu_s, b.server_wall_s));
  }
  if (b.echoes > 0) {
    out += fmt::format("{}TCP 1 B echoes: half RTT min/median {:.2f}/{:.2f} us over {}",
                       out.empty() ? "" : "; ", b.half_rtt_min_us, b.half_rtt_median_us, b.echoes);
  }
  if (!b.error.empty()) out += (out.empty() ? "" : "; ") + b.error;
  return out;
}

nlohmann::json to_json(const TcpBaseline& b) {
  return {{"ok", b.ok},
          {"error", b.error},
          {"bytes", b.bytes},
          {"seconds", b.seconds},
          {"gbps", b.gbps},
          {"client_cpu_percent", cpu_percent(b.client_cpu_s, b.client_wall_s)},
          {"server_cpu_percent", cpu_percent(b.server_cpu_s, b.server_wall_s)},
          {"echoes", b.echoes},
          {"half_rtt_min_us", b.half_rtt_min_us},
          {"half_rtt_median_us", b.half_rtt_median_us},
          {"elapsed_ms", b.elapsed_ms}};
}

std::string answer_tcp_stream(const Channel& sock, const nlohmann::json& first, Deadline end) {
  const auto seconds = first.value("seconds", 0.0);
  if (!(seconds > 0 && seconds <= kMaxSeconds)) {
    (void)send_frame(
        sock,
        {{"type", proto::type_name(proto::MessageType::kError)},
         {"message", fmt::format("tcp-stream seconds must be in (0, {}]", kMaxSeconds)}},
        end);
    return "bad tcp-stream request";
  }
  // The client streams SECONDS; a few more for the tail, never past the session's end.
  const Deadline stop = std::min(
      end, Clock::now() + std::chrono::duration_cast<Clock::duration>(Seconds(seconds + 5)));
  if (auto s =
          send_frame(sock, {{"type", proto::type_name(proto::MessageType::kTcpStreamReady)}}, stop);
      !s) {
    return "tcp stream: " + s.error().message();
  }
  // The stream is the socket's own bytes, after the last frame: nothing of
  // it may sit in TLS's buffer (the client waits for ready before it sends).
  if (sock.buffered()) return "tcp stream: the client sent more than its request before ready";
  const Fd& raw = sock.fd();
  std::vector<char> buf(kChunk);
  uint64_t bytes = 0;
  std::optional<Clock::time_point> first_byte;
  Clock::time_point last_byte{};
  std::optional<CpuClock> clock;
  bool eof = false;
  while (!eof && Clock::now() < stop) {
    if (!wait_for(raw, POLLIN, stop)) continue;
    const ssize_t n = ::recv(raw.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) return "tcp stream: recv: " + std::string(std::strerror(errno));
    if (n == 0) {
      eof = true;
      break;
    }
    if (!first_byte) {
      first_byte = Clock::now();
      clock.emplace();
    }
    last_byte = Clock::now();
    bytes += static_cast<uint64_t>(n);
  }
  if (!eof) return fmt::format("tcp stream: no end of stream after {} bytes", bytes);
  const double secs = first_byte ? Seconds(last_byte - *first_byte).count() : 0;
  const nlohmann::json result = {{"type", proto::type_name(proto::MessageType::kTcpStreamResult)},
                                 {"bytes", bytes},
                                 {"seconds", secs},
                                 {"cpu_s", clock ? clock->cpu_s() : 0.0},
                                 {"wall_s", clock ? clock->wall_s() : 0.0}};
  if (auto s = send_frame(sock, result, deadline_in(std::chrono::seconds(2))); !s) {
    return "tcp stream: " + s.error().message();
  }
  return fmt::format("streamed {} bytes in {:.2f} s", bytes, secs);
}

}  // namespace rdmacheck::perf
