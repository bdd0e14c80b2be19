#include "serve/server.h"

#include <fmt/core.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "conn/endpoint.h"
#include "doctor/check.h"
#include "net/ip_match.h"
#include "net/tcp.h"
#include "proto/auth.h"
#include "serve/cert_store.h"
#include "serve/cm_acceptor.h"
#include "serve/log.h"
#include "serve/server_names.h"
#include "serve/session.h"

namespace rdmacheck::serve {

namespace {

// The control sockets of the running sessions: on a stop they are shut down,
// which wakes every session (each waits on its socket) within moments instead
// of at its own deadline.
class Sockets {
 public:
  void add(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    fds_.insert(fd);
  }
  void remove(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    fds_.erase(fd);
  }
  void shutdown_all() {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }

 private:
  std::mutex mu_;
  std::set<int> fds_;
};

struct Running {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> done;
  std::shared_ptr<std::atomic<bool>> ok;
  std::shared_ptr<std::atomic<bool>> counted;  // SessionEnd::counted
};

}  // namespace

proto::ServerKeys ServerOptions::keys_now() const {
  proto::ServerKeys k{keys, rings ? rings->current() : nullptr, certs ? certs->current() : nullptr,
                      nullptr, allow_identities};
  if (!server_names.empty()) {
    k.names = [names = server_names](const std::string& dialled) {
      return answers_to(names, dialled);
    };
  }
  return k;
}

namespace {

// Who may use this server, in one line at start; nullopt when the options
// leave it open to anyone without --insecure.
std::optional<std::string> admission_line(const ServerOptions& o) {
  std::string allow;
  for (const auto& c : o.allow) allow += (allow.empty() ? "" : ", ") + c.text;
  const std::string from = o.allow.empty() ? "any address" : allow;
  if (o.certs) {
    const TlsCertFiles& f = o.certs->current()->files();
    return fmt::format(
        "rdmacheck serve: clients from {} must present a certificate from {} (mutual TLS 1.3; "
        "this server is {}, {}; CRL {}; SIGHUP re-reads)",
        from, f.ca, o.certs->current()->subject(), f.cert, f.crl.empty() ? "none" : f.crl);
  }
  if (o.rings) {
    std::string files;
    for (const auto& f : o.rings->files()) files += (files.empty() ? "" : ", ") + f;
    std::string names;
    for (const auto& n : o.server_names) names += (names.empty() ? "" : ", ") + n;
    return fmt::format(
        "rdmacheck serve: clients from {} must prove their identity's key in {} ({} identities; "
        "TLS 1.3; SIGHUP re-reads){}",
        from, files, o.rings->current()->size(),
        names.empty() ? "" : fmt::format("; they must dial {} or an address of this host", names));
  }
  if (!o.keys.empty()) {
    std::string files;
    for (const auto& k : o.keys) files += (files.empty() ? "" : ", ") + k.file;
    return fmt::format(
        "rdmacheck serve: clients from {} must prove the key in {} (a raw key: frames after the "
        "proof travel in clear; a key ring from `rdmacheck keygen` gives TLS 1.3)",
        from, files);
  }
  if (!o.allow.empty()) {
    return fmt::format(
        "rdmacheck serve: no --psk-file: clients from {} may run tests without a key", allow);
  }
  if (!o.insecure) return std::nullopt;
  return std::string(
      "rdmacheck serve: INSECURE (--insecure): no key and no --allow: anyone who reaches this "
      "port may run tests and read this host's doctor report");
}

// The limits as given, with the pinned-memory budget filled in when not.
Limits effective_limits(const ServerOptions& o) {
  Limits l = o.limits;
  if (l.pinned_bytes == 0) {
    const auto meminfo = o.fs.read("/proc/meminfo");
    l.pinned_bytes = default_pinned_budget(meminfo ? *meminfo : std::string(),
                                           conn::effective_memlock_limit(o.fs).value_or(0));
  }
  return l;
}

// The first line of the log: where it listens and every bound it keeps.
std::string listening_line(const ServerOptions& o, const Limits& lim, int port, bool cm) {
  return fmt::format(
      "rdmacheck serve: listening on {} port {} ({} sessions, {} per address; {} probes; {} "
      "handshakes, {} per address; {} MiB pinned; sends {}{})",
      o.bind.empty() ? "all addresses" : o.bind, port, lim.sessions, lim.sessions_per_source,
      lim.probes, lim.startups, lim.startups_per_source, lim.pinned_bytes >> 20,
      conn::traffic_cap_text(o.max_rate), cm ? "; rdma_cm too" : "");
}

}  // namespace

namespace {

// Options that leave the server open to anyone, or mix what cannot be mixed.
std::optional<Error> options_error(const ServerOptions& o, bool admits) {
  if (!admits) {
    return plain_error("refusing to serve anyone without a key",
                       "give --psk-file FILE, --allow CIDR, or --insecure");
  }
  if (o.rings && !o.keys.empty()) {
    return plain_error("key files", "key rings and raw keys cannot be mixed");
  }
  if (o.keys.size() > proto::kMaxServerKeys) {
    return plain_error(fmt::format("at most {} --psk-file", proto::kMaxServerKeys),
                       "the current and the next key");
  }
  return std::nullopt;
}

// SIGHUP: the certificates or the key ring read again; a read that fails
// keeps the old ones and says so.
void reload_keys(const ServerOptions& o, Log& log) {
  if (o.certs) {
    if (auto c = o.certs->reload(); !c) {
      log.security("rdmacheck serve: SIGHUP: " + c.error().message() +
                   "; the old certificates stay");
      return;
    }
    log.security("rdmacheck serve: SIGHUP: certificate, key, CA and CRL re-read");
    if (auto n = expiry_note(*o.certs->current(), std::chrono::system_clock::now())) {
      log.security(*n);
    }
  } else if (!o.rings) {
    log.security("rdmacheck serve: SIGHUP: no key ring to re-read");
  } else if (auto n = o.rings->reload(); n) {
    log.security(fmt::format("rdmacheck serve: SIGHUP: key ring re-read, {} identities", *n));
  } else {
    log.security("rdmacheck serve: SIGHUP: " + n.error().message() + "; the old key ring stays");
  }
}

// The allow-list, then a handshake slot: a refused peer gets one line and the
// reason, which its client names (auth-not-allowed, or the slot's reason).
// Handshake slots are counted apart from the sessions: connections that never
// finish their handshake cannot keep clients that do out.
std::optional<Admission::Ticket> admit(const Fd& conn, const std::string& peer,
                                       const ServerOptions& o, Admission& slots, Log& log) {
  const auto ip = parse_ip(peer_address(conn));
  if (!o.allow.empty() && (!ip || !allowed(o.allow, *ip))) {
    log.line(fmt::format("refused {}: not in --allow", peer));
    (void)send_frame(
        conn,
        proto::refusal_message(proto::AuthFailure::kNotAllowed,
                               fmt::format("this server's --allow list does not include {}",
                                           ip ? ip_text(*ip) : peer)),
        deadline_in(std::chrono::seconds(1)));
    return std::nullopt;
  }
  auto entry = slots.enter(ip ? ip_text(*ip) : peer);
  if (auto* why = std::get_if<std::string>(&entry)) {
    log.line(fmt::format("refused {}: {}", peer, *why));
    (void)send_frame(conn, proto::error_message(*why), deadline_in(std::chrono::seconds(1)));
    return std::nullopt;
  }
  return std::move(std::get<Admission::Ticket>(entry));
}

// What every session shares with the accept loop.
struct Context {
  const ServerOptions& o;
  Log& log;
  Sockets& sockets;
  Shared& shared;
  CmAcceptor* cm;
};

// The sessions on their threads. --one-off and --exit-after count sessions
// past the handshake only: a port scan, a bare connect or a client without
// the key never ends a server.
class Sessions {
 public:
  void start(int id, const std::string& peer, Fd conn, Admission::Ticket ticket, const Context& c) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    auto ok = std::make_shared<std::atomic<bool>>(false);
    auto counted = std::make_shared<std::atomic<bool>>(false);
    running_.push_back(Running{
        std::thread([id, done, ok, counted, peer, c, channel = Channel(std::move(conn)),
                     ticket = std::move(ticket)]() mutable {
          SessionEnd end;
          const int fd = channel.fd().get();
          c.sockets.add(fd);
          try {
            end = session(id, channel, peer, c.o, c.cm, ticket, c.shared, c.log);
          } catch (const std::exception& e) {
            end.line = fmt::format("session {} {} end: internal error: {}", id, peer, e.what());
          }
          c.sockets.remove(fd);
          channel = Channel();
          {
            // The slot and the budget are free before the line says the session ended.
            Admission::Ticket gone(std::move(ticket));
          }
          ok->store(end.ok);
          counted->store(end.counted);
          done->store(true);
          if (end.security) {
            c.log.security(end.line);
          } else {
            c.log.line(end.line);
          }
        }),
        done, ok, counted});
  }
  // Joins the sessions that ended.
  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->done->load()) {
        it->thread.join();
        count_end(*it);
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }
  void join_all() {
    for (auto& r : running_) {
      r.thread.join();
      count_end(r);
    }
    running_.clear();
  }
  [[nodiscard]] size_t running() const { return running_.size(); }
  [[nodiscard]] int ended() const { return ended_; }
  [[nodiscard]] bool first_ok() const { return first_ok_; }

 private:
  // Counted when past its handshake; the first one's status is kept.
  void count_end(const Running& r) {
    if (r.counted->load() && ended_++ == 0) first_ok_ = r.ok->load();
  }
  std::list<Running> running_;
  int ended_ = 0;
  bool first_ok_ = false;
};

// Out of descriptors (EMFILE/ENFILE) or another accept failure: the
// connection stays queued, so back off instead of spinning, and say so (at
// most once a minute).
void back_off(const Error& e, Clock::time_point& last_said, Log& log) {
  if (Clock::now() - last_said > std::chrono::minutes(1)) {
    log.line("rdmacheck serve: accepting failed, backing off: " + e.message());
    last_said = Clock::now();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace

int run_server(const ServerOptions& o, const std::atomic<bool>& stop, std::FILE* logf) {
  Log log(logf);
  // A start that fails is said on stderr and to on_listening, once.
  auto cannot_start = [&](const Error& e) {
    std::fprintf(stderr, "rdmacheck serve: %s\n", e.message().c_str());
    if (o.on_listening) o.on_listening(e);
    return 2;
  };
  const auto admission = admission_line(o);
  if (auto e = options_error(o, admission.has_value())) return cannot_start(*e);
  auto listener = tcp_listen(o.bind, o.tcp_port);
  if (!listener) return cannot_start(listener.error());
  // No RDMA device: say doctor's finding once, and keep answering what needs none.
  std::optional<Finding> no_rdma = doctor::no_rdma_device(o.fs);
  if (no_rdma) {
    log.line(fmt::format(
        "rdmacheck serve: no usable RDMA device ({}: {}; fix: {}); answering doctor requests and "
        "TCP probes, refusing RDMA tests with this finding",
        id_name(*no_rdma), no_rdma->summary, no_rdma->fix));
  }
  // Clients that connect with --cm meet this listener; without it, the rest still works.
  auto acceptor = no_rdma ? Result<std::unique_ptr<CmAcceptor>>(plain_error("rdma_cm", "no device"))
                          : CmAcceptor::start(o.bind, local_port(*listener), o.allow,
                                              [&log](const std::string& line) { log.line(line); });
  if (!acceptor && !no_rdma) {
    log.line("rdmacheck serve: no rdma_cm listener (--cm clients will be refused): " +
             acceptor.error().message());
  }
  Admission slots(effective_limits(o));
  Shared shared{DoctorCache(o.fs), conn::TrafficPool(o.max_rate), std::move(no_rdma)};
  Sockets sockets;
  const Context ctx{o, log, sockets, shared, acceptor ? acceptor->get() : nullptr};
  log.line(listening_line(o, slots.limits(), local_port(*listener), ctx.cm != nullptr));
  log.line(*admission);
  if (o.certs) {
    if (auto n = expiry_note(*o.certs->current(), std::chrono::system_clock::now())) log.line(*n);
  }
  if (o.on_listening) o.on_listening(local_port(*listener));
  const int exit_after = o.one_off ? 1 : o.exit_after;
  Sessions sessions;
  Clock::time_point last_accept_error{};
  int next_id = 1;
  while (!stop.load() && (exit_after == 0 || sessions.ended() < exit_after)) {
    sessions.reap();
    if (o.reload != nullptr && o.reload->exchange(false)) reload_keys(o, log);
    std::string peer;
    auto conn = tcp_accept(*listener, deadline_in(std::chrono::milliseconds(200)), &peer);
    if (!conn) {
      // A timeout: look at the stop flag again.
      if (conn.error().errnum != ETIMEDOUT) back_off(conn.error(), last_accept_error, log);
      continue;
    }
    if (auto ticket = admit(*conn, peer, o, slots, log)) {
      sessions.start(next_id++, peer, std::move(*conn), std::move(*ticket), ctx);
    }
  }
  // A stop (SIGTERM, SIGINT) ends the running sessions now: their sockets
  // close under them, and each says goodbye through its own error path.
  if (stop.load()) {
    if (sessions.running() > 0) {
      log.line(fmt::format("rdmacheck serve: stopping, ending {} session(s)", sessions.running()));
    }
    sockets.shutdown_all();
  }
  sessions.join_all();
  if (o.one_off) return sessions.ended() > 0 && sessions.first_ok() ? 0 : 1;
  return 0;
}

}  // namespace rdmacheck::serve
