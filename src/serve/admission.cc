#include "serve/admission.h"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

namespace rdmacheck::serve {

uint64_t default_pinned_budget(const std::string& meminfo_text, uint64_t memlock_limit) {
  constexpr uint64_t kFloor = 64ull << 20;
  uint64_t budget = 1ull << 30;  // when /proc/meminfo says nothing
  std::istringstream in(meminfo_text);
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") {
      budget = kib * 1024 / 8;
      break;
    }
    in.ignore(1 << 10, '\n');
  }
  if (memlock_limit != 0) budget = std::min(budget, memlock_limit);
  return std::max(budget, kFloor);
}

std::variant<Admission::Ticket, std::string> Admission::enter(const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  PerSource& s = by_source_[source];
  if (s.startups >= limits_.startups_per_source) {
    return fmt::format("server busy: {} connections from {} are already in their handshake",
                       s.startups, source);
  }
  if (total_.startups >= limits_.startups) {
    if (s.startups == 0 && s.sessions == 0) by_source_.erase(source);
    return fmt::format("server busy: {} connections are already in their handshake",
                       total_.startups);
  }
  ++s.startups;
  ++total_.startups;
  return Ticket(this, source);
}

Usage Admission::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_;
}

void Admission::release(Ticket& t) {
  std::lock_guard<std::mutex> lock(mu_);
  PerSource& s = by_source_[t.source_];
  if (t.session_) {
    --s.sessions;
    --total_.sessions;
  } else {
    --s.startups;
    --total_.startups;
  }
  total_.pinned -= t.pinned_;
  if (s.startups == 0 && s.sessions == 0) by_source_.erase(t.source_);
}

Admission::Ticket::Ticket(Ticket&& o) noexcept
    : a_(o.a_), source_(std::move(o.source_)), session_(o.session_), pinned_(o.pinned_) {
  o.a_ = nullptr;
}

Admission::Ticket::~Ticket() {
  if (a_ != nullptr) a_->release(*this);
}

std::optional<std::string> Admission::Ticket::promote() {
  if (session_) return std::nullopt;
  std::lock_guard<std::mutex> lock(a_->mu_);
  PerSource& s = a_->by_source_[source_];
  if (s.sessions >= a_->limits_.sessions_per_source) {
    return fmt::format("server busy: {} sessions from {} already running", s.sessions, source_);
  }
  if (a_->total_.sessions >= a_->limits_.sessions) {
    return fmt::format("server busy: {} sessions already running", a_->total_.sessions);
  }
  --s.startups;
  --a_->total_.startups;
  ++s.sessions;
  ++a_->total_.sessions;
  session_ = true;
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
  a_->total_.pinned += bytes;
  pinned_ += bytes;
  return std::nullopt;
}

}  // namespace rdmacheck::serve
