#include "monitor/http.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <list>

#include "net/tcp.h"

namespace rdmacheck::monitor {
namespace {

using Clock = std::chrono::steady_clock;

std::string response(int status, const char* reason, const std::string& type,
                     const std::string& body, bool head) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
      status, reason, type, body.size(), head ? "" : body);
}

struct Conn {
  Fd fd;
  Clock::time_point deadline;
  std::string in;
  std::string out;  // the response, once the request is complete
  size_t sent = 0;
};

}  // namespace

HttpReply http_reply(const std::string& request, const MetricsServer::Body& body) {
  const auto eol = request.find_first_of("\r\n");
  const std::string line = request.substr(0, eol);
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  const std::string text = "text/plain; charset=utf-8";
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
    return {response(400, "Bad Request", text, "not an HTTP request\n", false), 400};
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (const auto q = target.find('?'); q != std::string::npos) target.resize(q);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    return {response(405, "Method Not Allowed", text, "only GET and HEAD\n", false), 405};
  }
  if (target == "/metrics") {
    return {response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", body(), head), 200};
  }
  if (target == "/") {
    return {response(200, "OK", text, "rdmacheck monitor: the metrics are at /metrics\n", head),
            200};
  }
  return {response(404, "Not Found", text, "the metrics are at /metrics\n", head), 404};
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& addr, uint16_t port,
                                                            Body body, HttpOptions o) {
  auto l = tcp_listen(addr, port, 128);
  if (!l) return l.error();
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->listener_ = std::move(*l);
  s->port_ = local_port(s->listener_);
  int p[2] = {-1, -1};
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return errno_error("pipe2");
  s->wake_read_ = Fd(p[0]);
  s->wake_write_ = Fd(p[1]);
  s->body_ = std::move(body);
  s->o_ = o;
  s->o_.max_connections = std::max<size_t>(1, s->o_.max_connections);
  s->thread_ = std::thread([raw = s.get()] { raw->loop(); });
  return s;
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::stop() {
  if (!thread_.joinable()) return;
  const char c = 'x';
  (void)::write(wake_write_.get(), &c, 1);
  thread_.join();
}

HttpStats MetricsServer::stats() const {
  return HttpStats{served_.load(), rejected_.load(), timed_out_.load(), evicted_.load()};
}

void MetricsServer::loop() {
  std::list<Conn> conns;  // oldest first
  std::vector<pollfd> fds;
  std::vector<Conn*> of;
  char buf[4096];
  for (;;) {
    const auto now = Clock::now();
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->deadline <= now) {
        timed_out_.fetch_add(1);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
    fds.assign({pollfd{wake_read_.get(), POLLIN, 0}, pollfd{listener_.get(), POLLIN, 0}});
    of.assign(2, nullptr);
    auto next = now + std::chrono::seconds(1);
    for (auto& c : conns) {
      fds.push_back(pollfd{c.fd.get(), static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
      of.push_back(&c);
      next = std::min(next, c.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(1, wait))) < 0 &&
        errno != EINTR) {
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) return;  // stop(): the connections close with the list
    std::vector<Conn*> done;
    for (size_t i = 2; i < fds.size(); ++i) {
      Conn& c = *of[i];
      if (fds[i].revents == 0) continue;
      if (c.out.empty()) {
        const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0) {
          if (n == 0 || (errno != EAGAIN && errno != EINTR)) done.push_back(&c);
          continue;
        }
        c.in.append(buf, static_cast<size_t>(n));
        const bool complete =
            c.in.find("\r\n\r\n") != std::string::npos || c.in.find("\n\n") != std::string::npos;
        if (!complete && c.in.size() <= o_.max_request_bytes) continue;
        const HttpReply r =
            complete && c.in.size() <= o_.max_request_bytes
                ? http_reply(c.in, body_)
                : HttpReply{response(400, "Bad Request", "text/plain; charset=utf-8",
                                     "request headers over the limit\n", false),
                            400};
        (r.status == 200 ? served_ : rejected_).fetch_add(1);
        c.out = r.bytes;
      }
      const ssize_t w = ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0) c.sent += static_cast<size_t>(w);
      if (c.sent == c.out.size() || (w < 0 && errno != EAGAIN && errno != EINTR)) {
        ::shutdown(c.fd.get(), SHUT_WR);
        done.push_back(&c);
      }
    }
    conns.remove_if(
        [&](const Conn& c) { return std::find(done.begin(), done.end(), &c) != done.end(); });
    if ((fds[1].revents & POLLIN) == 0) continue;
    for (int k = 0; k < 16; ++k) {  // a burst of connects, without starving the others
      Fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!fd.valid()) break;
      if (conns.size() >= o_.max_connections) {
        evicted_.fetch_add(1);
        conns.pop_front();
      }
      conns.push_back(Conn{std::move(fd), Clock::now() + o_.request_timeout, {}, {}, 0});
    }
  }
}

}  // namespace rdmacheck::monitor
