#include "serve/cm_acceptor.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <netdb.h>
#include <poll.h>
#include <sys/random.h>

#include <cstring>

namespace rdmacheck::serve {

Result<std::unique_ptr<CmAcceptor>> CmAcceptor::start(const std::string& bind, uint16_t port,
                                                      std::vector<Cidr> allow,
                                                      std::function<void(const std::string&)> log) {
  std::unique_ptr<CmAcceptor> a(new CmAcceptor());
  a->allow_ = std::move(allow);
  a->log_ = std::move(log);
  auto ch = verbs::create_event_channel();
  if (!ch) return ch.error();
  a->channel_ = std::move(*ch);
  auto id = verbs::create_cm_id(a->channel_.get());
  if (!id) return id.error();
  a->listener_ = std::move(*id);
  addrinfo hints{};
  hints.ai_family = bind.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(bind.empty() ? nullptr : bind.c_str(), std::to_string(port).c_str(),
                             &hints, &res);
      rc != 0) {
    return plain_error("getaddrinfo", fmt::format("{}: {}", bind, gai_strerror(rc)));
  }
  const int rc = rdma_bind_addr(a->listener_.get(), res->ai_addr);
  ::freeaddrinfo(res);
  const std::string ctx = fmt::format("{} port {}", bind.empty() ? "*" : bind, port);
  if (rc != 0) return errno_error("rdma_bind_addr", ctx);
  if (rdma_listen(a->listener_.get(), 16) != 0) return errno_error("rdma_listen", ctx);
  a->thread_ = std::thread([raw = a.get()] { raw->loop(); });
  return a;
}

CmAcceptor::~CmAcceptor() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  // pending_'s ids go with it, before the listener and the channel.
}

uint64_t CmAcceptor::expect(const Ip16& peer) {
  uint64_t token = 0;
  while (token == 0) {
    if (getrandom(&token, sizeof token, 0) != sizeof token) token = 0;
  }
  std::lock_guard<std::mutex> lock(mu_);
  pending_[token] = Pending{peer, nullptr, {}};
  return token;
}

void CmAcceptor::cancel(uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(token);
}

Result<verbs::CmIdPtr> CmAcceptor::wait(uint64_t token, Deadline d, int abort_fd) {
  std::unique_lock<std::mutex> lock(mu_);
  bool arrived = false;
  bool aborted = false;
  while (!arrived && !aborted && Clock::now() < d) {
    const Deadline slice = std::min(d, deadline_in(std::chrono::milliseconds(100)));
    arrived = cv_.wait_until(lock, slice, [&] {
      const Pending& p = pending_[token];
      return p.id != nullptr || !p.refused.empty();
    });
    if (!arrived && abort_fd >= 0) {
      pollfd p{abort_fd, POLLIN, 0};
      aborted = ::poll(&p, 1, 0) > 0;
    }
  }
  Pending got = std::move(pending_[token]);
  pending_.erase(token);
  if (!got.refused.empty()) return code_error("rdma_cm", EACCES, got.refused);
  if (arrived) return std::move(got.id);
  if (aborted) return code_error("rdma_cm", ECANCELED, "the client gave up before connecting");
  return code_error("rdma_cm", ETIMEDOUT, "no connect request carrying this session's token");
}

// The allow-list holds for rdma_cm's requests as for TCP connections.
bool CmAcceptor::admits(rdma_cm_id* id) const {
  if (allow_.empty()) return true;
  const auto ip = ip_of(rdma_get_peer_addr(id));
  if (ip && allowed(allow_, *ip)) return true;
  if (log_) {
    log_(fmt::format("refused rdma_cm connect request from {}: not in --allow",
                     ip ? ip_text(*ip) : std::string("an unknown address")));
  }
  return false;
}

void CmAcceptor::loop() {
  while (!stop_.load()) {
    auto ev = verbs::next_cm_event(channel_.get(), deadline_in(std::chrono::milliseconds(200)));
    if (!ev || ev->type != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
    if (!admits(ev->id.get())) {
      rdma_reject(ev->id.get(), nullptr, 0);
      continue;
    }
    uint64_t token = 0;
    if (ev->private_data.size() >= sizeof token) {
      std::memcpy(&token, ev->private_data.data(), sizeof token);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pending_.find(token);
      if (token != 0 && it != pending_.end() && it->second.id == nullptr &&
          it->second.refused.empty()) {
        Pending& p = it->second;
        const auto from = ip_of(rdma_get_peer_addr(ev->id.get()));
        if (from && *from == p.peer) {
          p.id = std::move(ev->id);
        } else {
          p.refused = fmt::format(
              "the rdma_cm connect request came from {}, not from the control connection's "
              "client {}: this server connects its QP only back to the host it talks to",
              from ? ip_text(*from) : std::string("an unknown address"), ip_text(p.peer));
          if (log_) log_("refused: " + p.refused);
        }
        cv_.notify_all();
        if (p.id != nullptr) continue;
      }
    }
    rdma_reject(ev->id.get(), nullptr, 0);  // the id goes with ev
  }
}

}  // namespace rdmacheck::serve
