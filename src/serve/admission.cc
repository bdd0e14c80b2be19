#include "serve/admission.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "net/ip_match.h"

namespace rdmacheck::serve {

uint64_t default_pinned_budget(const std::string& meminfo_text, uint64_t memlock_limit) {
  constexpr uint64_t kFloor = 64ull << 20;
  constexpr uint64_t kCeiling = 2ull << 30;  // what a production node can spare for tests
  uint64_t budget = 1ull << 30;              // when /proc/meminfo says nothing
  std::istringstream in(meminfo_text);
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") {
      budget = std::min(kib * 1024 / 16, kCeiling);
      break;
    }
    in.ignore(1 << 10, '\n');
  }
  if (memlock_limit != 0) budget = std::min(budget, memlock_limit);
  return std::max(budget, kFloor);
}

std::string prefix_of(const std::string& source) {
  auto ip = parse_ip(source);
  if (!ip) return source;
  const bool v4 = source.find(':') == std::string::npos;
  // IPv4 is held as ::ffff:a.b.c.d: its /24 is the first 15 bytes.
  const size_t keep = v4 ? 15 : 8;
  std::fill(ip->begin() + static_cast<std::ptrdiff_t>(keep), ip->end(), 0);
  return ip_text(*ip) + (v4 ? "/24" : "/64");
}

std::variant<Admission::Ticket, std::string> Admission::enter(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string prefix = prefix_of(source);
  PerSource& s = by_source_[source];
  auto forget = [&] {
    if (s.startups == 0 && s.sessions == 0 && s.probes == 0) by_source_.erase(source);
  };
  if (s.startups >= limits_.startups_per_source) {
    return fmt::format("server busy: {} connections from {} are already in their handshake",
                       s.startups, source);
  }
  // The last quarter of the slots is kept for networks below their share
  // (a quarter each): one network fills at most three quarters.
  const int share = std::max(limits_.startups_per_source, limits_.startups / 4);
  if (const auto p = startups_by_prefix_.find(prefix);
      p != startups_by_prefix_.end() && p->second >= share &&
      limits_.startups - total_.startups <= share) {
    const int n = p->second;
    forget();
    return fmt::format(
        "server busy: {} connections from {} are already in their handshake (the last slots "
        "are kept for other networks)",
        n, prefix);
  }
  if (total_.startups >= limits_.startups) {
    forget();
    return fmt::format("server busy: {} connections are already in their handshake",
                       total_.startups);
  }
  ++s.startups;
  ++startups_by_prefix_[prefix];
  ++total_.startups;
  return Ticket(this, source, prefix);
}

Usage Admission::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_;
}

void Admission::release(Ticket& t) {
  std::lock_guard<std::mutex> lock(mu_);
  PerSource& s = by_source_[t.source_];
  if (t.probe_) {
    --s.probes;
    --total_.probes;
  } else if (t.session_) {
    --s.sessions;
    --total_.sessions;
    if (!t.identity_.empty() && --sessions_by_identity_[t.identity_] == 0) {
      sessions_by_identity_.erase(t.identity_);
    }
  } else {
    leave_startup(s, t.prefix_);
  }
  total_.pinned -= t.pinned_;
  if (!t.identity_.empty() && t.pinned_ > 0 &&
      (pinned_by_identity_[t.identity_] -= t.pinned_) == 0) {
    pinned_by_identity_.erase(t.identity_);
  }
  if (s.startups == 0 && s.sessions == 0 && s.probes == 0) by_source_.erase(t.source_);
}

void Admission::leave_startup(PerSource& s, const std::string& prefix) {
  --s.startups;
  --total_.startups;
  if (--startups_by_prefix_[prefix] == 0) startups_by_prefix_.erase(prefix);
}

Admission::Ticket::Ticket(Ticket&& o) noexcept
    : a_(o.a_),
      source_(std::move(o.source_)),
      prefix_(std::move(o.prefix_)),
      identity_(std::move(o.identity_)),
      session_(o.session_),
      probe_(o.probe_),
      pinned_(o.pinned_) {
  o.a_ = nullptr;
}

Admission::Ticket::~Ticket() {
  if (a_ != nullptr) a_->release(*this);
}

std::optional<std::string> Admission::Ticket::promote(const std::string& identity) {
  if (session_) return std::nullopt;
  std::lock_guard<std::mutex> lock(a_->mu_);
  PerSource& s = a_->by_source_[source_];
  if (s.sessions >= a_->limits_.sessions_per_source) {
    return fmt::format("server busy: {} sessions from {} already running", s.sessions, source_);
  }
  if (!identity.empty()) {
    const auto i = a_->sessions_by_identity_.find(identity);
    if (i != a_->sessions_by_identity_.end() && i->second >= a_->limits_.sessions_per_identity) {
      return fmt::format("server busy: {} sessions of identity '{}' already running", i->second,
                         identity);
    }
  }
  if (a_->total_.sessions >= a_->limits_.sessions) {
    return fmt::format("server busy: {} sessions already running", a_->total_.sessions);
  }
  a_->leave_startup(s, prefix_);
  ++s.sessions;
  ++a_->total_.sessions;
  if (!identity.empty()) ++a_->sessions_by_identity_[identity];
  identity_ = identity;
  session_ = true;
  return std::nullopt;
}

std::optional<std::string> Admission::Ticket::promote_probe() {
  if (session_) return std::nullopt;
  std::lock_guard<std::mutex> lock(a_->mu_);
  PerSource& s = a_->by_source_[source_];
  if (s.probes >= a_->limits_.probes_per_source) {
    return fmt::format("server busy: {} probes from {} already running", s.probes, source_);
  }
  if (a_->total_.probes >= a_->limits_.probes) {
    return fmt::format("server busy: {} probes already running (serve --max-probes)",
                       a_->total_.probes);
  }
  a_->leave_startup(s, prefix_);
  ++s.probes;
  ++a_->total_.probes;
  session_ = true;
  probe_ = true;
  return std::nullopt;
}

std::optional<std::string> Admission::Ticket::pin(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(a_->mu_);
  const uint64_t budget = a_->limits_.pinned_bytes;
  if (bytes > budget) {  // never fits, however idle the server: "later" would not help
    return fmt::format(
        "refused: a buffer of {} KiB is over this server's whole pinned-memory budget ({} KiB, "
        "serve --max-pinned); use a smaller -s",
        (bytes + 1023) >> 10, budget >> 10);
  }
  if (a_->total_.pinned + bytes > budget) {
    return fmt::format(
        "server busy: a buffer of {} KiB would exceed this server's pinned-memory budget "
        "({} of {} KiB in use); try a smaller -s or later",
        bytes >> 10, a_->total_.pinned >> 10, budget >> 10);
  }
  if (!identity_.empty()) {
    uint64_t& mine = a_->pinned_by_identity_[identity_];
    if (mine + bytes > budget / 2) {
      const uint64_t held = mine;
      if (held == 0) a_->pinned_by_identity_.erase(identity_);
      return fmt::format(
          "server busy: a buffer of {} KiB would take identity '{}' over half this server's "
          "pinned-memory budget ({} of {} KiB in use by it); try a smaller -s or later",
          bytes >> 10, identity_, held >> 10, (budget / 2) >> 10);
    }
    mine += bytes;
  }
  a_->total_.pinned += bytes;
  pinned_ += bytes;
  return std::nullopt;
}

}  // namespace rdmacheck::serve
