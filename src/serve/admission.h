// How much of this host the server gives away, and to whom: connections that
// have not finished their handshake (sshd's MaxStartups) are counted apart
// from sessions, both in total and per source address; handshakes also per
// network (an IPv4 /24, an IPv6 /64: one host of a /64 has 2^64 addresses,
// and eight addresses of one /24 held every slot before): the last quarter
// of the slots is kept for networks that hold less than a quarter, so one
// network fills at most three quarters and other networks still get in.
// Sessions are capped per client identity too (a key ring's or a
// certificate's: one leaked key cannot take every session), and every
// session's registered buffer (both halves) is charged to one pinned-memory
// budget, of which one identity may hold at most half.
// A monitor's probe (proto::TestSpec::probe: a small ping) takes a probe
// slot instead of a session slot, from a pool of its own: a fleet of
// monitors never keeps a user's test out, nor a test a probe. Probes are
// not capped per identity (a fleet shares one key) but per source.
// A slot is a Ticket: it is given back the moment its owner goes away.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

namespace rdmacheck::serve {

struct Limits {
  int startups = 32;              // connections still in their handshake, all sources
  int startups_per_source = 4;    // ... from one address (a /24 or /64: see above)
  int sessions = 16;              // sessions past their handshake, all sources
  int sessions_per_source = 4;    // ... from one address
  int sessions_per_identity = 8;  // ... of one key ring identity
  // Probe sessions, apart: 1,000 monitors at the default 10 s interval each
  // hold one for about 0.3 s per transport, some 60 at once.
  int probes = 128;
  int probes_per_source = 4;  // a monitor runs one round per peer at a time
  uint64_t pinned_bytes = 0;  // registered test buffers, all sessions (0: default_pinned_budget)
};

// The default pinned-memory budget: the smaller of a sixteenth of the
// machine's memory (MEMINFO_TEXT is /proc/meminfo) and 2 GiB, never more
// than RLIMIT_MEMLOCK when that is finite (MEMLOCK_LIMIT; 0 = infinite), at
// least 64 MiB. A node that serves tests beside its real work keeps the rest.
uint64_t default_pinned_budget(const std::string& meminfo_text, uint64_t memlock_limit);

struct Usage {
  int startups = 0;
  int sessions = 0;
  int probes = 0;
  uint64_t pinned = 0;
};

class Admission {
 public:
  class Ticket;
  explicit Admission(Limits l) : limits_(l) {}
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // A handshake slot for a new connection from SOURCE (an address), or why there is none.
  std::variant<Ticket, std::string> enter(const std::string& source);
  [[nodiscard]] Usage usage() const;
  [[nodiscard]] const Limits& limits() const { return limits_; }

  class Ticket {
   public:
    Ticket(Ticket&& o) noexcept;
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    ~Ticket();
    // The handshake is over: the startup slot becomes a session slot, or
    // the reason there is none (the ticket then keeps its startup slot).
    // IDENTITY: the client's key ring identity ("": none, not capped).
    std::optional<std::string> promote(const std::string& identity = "");
    // The same for a monitor's probe: a probe slot, or why there is none.
    std::optional<std::string> promote_probe();
    // Charges BYTES of registered memory to the budget, or says why not.
    std::optional<std::string> pin(uint64_t bytes);

   private:
    friend class Admission;
    Ticket(Admission* a, std::string source, std::string prefix)
        : a_(a), source_(std::move(source)), prefix_(std::move(prefix)) {}
    Admission* a_;
    std::string source_;
    std::string prefix_;
    std::string identity_;
    bool session_ = false;
    bool probe_ = false;  // with session_: the slot is a probe's
    uint64_t pinned_ = 0;
  };

 private:
  struct PerSource {
    int startups = 0;
    int sessions = 0;
    int probes = 0;
  };
  void leave_startup(PerSource& s, const std::string& prefix);
  void release(Ticket& t);
  Limits limits_;
  mutable std::mutex mu_;
  Usage total_;
  std::map<std::string, PerSource> by_source_;
  std::map<std::string, int> startups_by_prefix_;
  std::map<std::string, int> sessions_by_identity_;
  std::map<std::string, uint64_t> pinned_by_identity_;  // at most half the budget each
};

// The network SOURCE counts against: "198.18.0.0/24", "fd00:1:2:3::/64";
// SOURCE itself when it is not an address.
std::string prefix_of(const std::string& source);

}  // namespace rdmacheck::serve
