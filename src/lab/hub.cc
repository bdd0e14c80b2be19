#include "lab/hub.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <queue>

namespace rdmacheck::lab {

Result<sockaddr_un> unix_addr(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    return plain_error("lab", fmt::format("socket path too long for AF_UNIX ({} bytes): {}; use a "
                                          "shorter --workdir",
                                          path.size(), path));
  }
  std::memcpy(a.sun_path, path.c_str(), path.size());
  return a;
}

Result<std::unique_ptr<Hub>> Hub::start(const std::vector<std::string>& hub_paths,
                                        const std::vector<std::string>& guest_paths,
                                        const std::vector<int>& wires, uint64_t seed) {
  if (guest_paths.size() != hub_paths.size() ||
      (!wires.empty() && wires.size() != hub_paths.size())) {
    return plain_error("lab", "the hub needs a guest socket and a wire for each port");
  }
  std::unique_ptr<Hub> h(new Hub());
  for (const auto& p : hub_paths) {
    auto addr = unix_addr(p);
    if (!addr) return addr.error();
    Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return errno_error("socket");
    ::unlink(p.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
      return errno_error("bind", p);
    }
    h->socks_.push_back(std::move(fd));
  }
  for (const auto& g : guest_paths) {
    if (auto addr = unix_addr(g); !addr) return addr.error();
  }
  h->guests_ = guest_paths;
  h->stalls_.resize(guest_paths.size());
  h->mutes_.resize(guest_paths.size());
  h->wires_ = wires.empty() ? std::vector<int>(hub_paths.size(), 1) : wires;
  for (size_t i = 0; i < hub_paths.size(); ++i) {
    // One stream of random choices per port and direction.
    h->shapers_.push_back(
        PortShapers{Shaper(seed * 1000003 + 2 * i), Shaper(seed * 1000003 + 2 * i + 1)});
  }
  h->thread_ = std::thread([raw = h.get()] { raw->loop(); });
  return h;
}

Hub::~Hub() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

double Hub::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

std::optional<double> Hub::run_s() const {  // mu_ held
  if (!run_began_) return std::nullopt;
  return now_s() - *run_began_;
}

bool Hub::add_fault(size_t port, const SwitchFault& f) {
  const std::lock_guard lock(mu_);
  if (port >= shapers_.size()) return false;
  const double now = now_s();
  if (f.direction != PortDirection::kOut) shapers_[port].in.add(f, now);
  if (f.direction != PortDirection::kIn) shapers_[port].out.add(f, now);
  ever_.resize(shapers_.size());
  ever_[port].push_back(f.spec);
  return true;
}

void Hub::clear_faults() {
  const std::lock_guard lock(mu_);
  for (auto& s : shapers_) {
    s.in.clear();
    s.out.clear();
  }
}

void Hub::begin_run() {
  const std::lock_guard lock(mu_);
  if (!run_began_) run_began_ = now_s();
}

Hub::Stall Hub::longest_stall(size_t i) const {
  const std::lock_guard lock(mu_);
  return i < stalls_.size() ? stalls_[i] : Stall{};
}

Hub::Mute Hub::longest_mute(size_t i) const {
  const std::lock_guard lock(mu_);
  return i < mutes_.size() ? mutes_[i] : Mute{};
}

double Hub::silent_s(size_t i) const { return i < kPorts ? now_s() - last_from_s_[i].load() : 0; }

Hub::PortFaults Hub::switch_report(size_t port) const {
  const std::lock_guard lock(mu_);
  PortFaults r;
  if (port >= shapers_.size()) return r;
  const auto& s = shapers_[port];
  r.in = s.in.counters();
  r.out = s.out.counters();
  if (port < ever_.size()) r.ever = ever_[port];
  // A fault on both directions sits in both shapers: name it once.
  for (const auto& f : s.in.faults()) r.faults.push_back(f);
  for (const auto& f : s.out.faults()) {
    if (f.direction == PortDirection::kOut) r.faults.push_back(f);
  }
  return r;
}

namespace {

// Frames a guest is not ready to take yet wait here, as in a switch's port
// buffer; beyond this many the hub drops them, as a switch would.
constexpr size_t kPortBuffer = 4096;

}  // namespace

// Each hub socket is connected to its guest once that guest's QEMU has bound
// its end, so poll() tells when the guest's queue has room (a unix datagram
// socket queues only a handful of frames: unqueued, a burst is lost).
// The switch's forwarding thread: per port, what waits for its guest and
// the figures of a stall; the frames the faults hold until their time.
class Hub::Loop {
 public:
  explicit Loop(Hub& h)
      : h_(h),
        n_(h.socks_.size()),
        connected_(n_, false),
        queued_(n_),
        waiting_since_(n_),
        last_from_(n_, 0),
        last_taken_(n_, 0),
        taken_since_sent_(n_, 0),
        first_taken_since_sent_(n_, 0) {
    for (const auto& g : h_.guests_) {
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::memcpy(a.sun_path, g.c_str(), g.size());
      dest_.push_back(a);
    }
  }

  void run() {
    std::vector<pollfd> fds(n_);
    while (!h_.stop_.load()) {
      for (size_t i = 0; i < n_; ++i) {
        fds[i] = pollfd{h_.socks_[i].get(),
                        static_cast<short>(POLLIN | (queued_[i].empty() ? 0 : POLLOUT)), 0};
      }
      int wait_ms = 100;
      if (!held_.empty()) {
        const double until = held_.top().release - h_.now_s();
        wait_ms = until <= 0 ? 0 : std::min(100, static_cast<int>(until * 1000) + 1);
      }
      const int ready = ::poll(fds.data(), fds.size(), wait_ms);
      release_held();
      note_stalls(h_.now_s());
      if (ready <= 0) continue;
      for (size_t j = 0; j < n_; ++j) {
        if ((fds[j].revents & POLLOUT) != 0) flush(j);
      }
      for (size_t i = 0; i < n_; ++i) {
        if ((fds[i].revents & POLLIN) != 0) receive(i);
      }
    }
  }

 private:
  // Frames the switch holds (delay, rate, reordering) until their time.
  struct Held {
    double release;
    uint64_t seq;
    size_t to;
    std::string data;
    bool operator>(const Held& o) const {
      return release != o.release ? release > o.release : seq > o.seq;
    }
  };

  // Per guest: since when frames have waited for it without a break, when
  // its QEMU last took one, and when it last sent one: together a stall.
  // And frames it took since it last sent one: a mute guest.
  void note_stalls(double now) {
    const std::lock_guard lock(h_.mu_);
    for (size_t j = 0; j < n_; ++j) {
      if (taken_since_sent_[j] >= kMuteFrames) {
        const double from = first_taken_since_sent_[j];
        if (now - from > h_.mutes_[j].seconds) {
          h_.mutes_[j] = Mute{from, now - from, taken_since_sent_[j]};
        }
      }
      if (queued_[j].empty()) {
        waiting_since_[j].reset();
        continue;
      }
      if (!waiting_since_[j]) waiting_since_[j] = now;
      const double from = std::max({*waiting_since_[j], last_from_[j], last_taken_[j]});
      if (now - from > h_.stalls_[j].seconds) h_.stalls_[j] = Stall{from, now - from};
    }
  }

  // Sends what waits for guest j; false when its queue is (still) full.
  bool flush(size_t j) {
    bool took = false;
    bool room = true;
    while (!queued_[j].empty()) {
      const std::string& f = queued_[j].front();
      if (::send(h_.socks_[j].get(), f.data(), f.size(), MSG_DONTWAIT) < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          room = false;
          break;
        }
        connected_[j] = false;  // the guest went away: forget what waited for it
        queued_[j].clear();
        break;
      }
      if (taken_since_sent_[j]++ == 0) first_taken_since_sent_[j] = h_.now_s();
      took = true;
      queued_[j].pop_front();
    }
    if (took) last_taken_[j] = h_.now_s();
    return room;
  }

  void deliver(size_t j, const char* data, size_t len) {
    if (!connected_[j]) {
      connected_[j] = ::connect(h_.socks_[j].get(), reinterpret_cast<sockaddr*>(&dest_[j]),
                                sizeof dest_[j]) == 0;
      if (!connected_[j]) {  // not started yet: the frame is lost, as on a dead port
        if (j < kPorts) h_.unheard_[j].fetch_add(1);
        return;
      }
    }
    if (queued_[j].size() >= kPortBuffer) {
      h_.dropped_.fetch_add(1);
      if (j < kPorts) h_.to_dropped_[j].fetch_add(1);
      return;
    }
    queued_[j].emplace_back(data, len);
    if (j < kPorts && queued_[j].size() > h_.max_queue_[j].load()) {
      h_.max_queue_[j].store(queued_[j].size());
    }
    flush(j);
  }

  void release_held() {
    for (const double now = h_.now_s(); !held_.empty() && held_.top().release <= now;) {
      const Held& held = held_.top();
      deliver(held.to, held.data.data(), held.data.size());
      held_.pop();
    }
  }

  // A frame through one of port I's shapers (its OUT side for frames from
  // its host, IN for frames towards it), arriving at NOW.
  FrameFate shape(size_t i, bool towards_host, size_t len, double now) {
    const std::lock_guard lock(h_.mu_);
    auto& s = towards_host ? h_.shapers_[i].in : h_.shapers_[i].out;
    return s.empty() ? FrameFate{} : s.decide(len, now, h_.run_s());
  }

  static void flip(std::string& data, const FrameFate& fate) {
    if (fate.flip_bit) data[*fate.flip_bit / 8] ^= static_cast<char>(1U << (*fate.flip_bit % 8));
  }

  // Port J's ingress faults (towards its host), then the frame goes on.
  void towards(size_t j, std::string data, double delay) {
    const double now = h_.now_s();
    const FrameFate fate = shape(j, true, data.size(), now);
    if (fate.drop) return;
    flip(data, fate);
    for (int c = 0; c < fate.copies; ++c) {
      const double d = delay + fate.delay_s;
      if (d <= 0) {
        deliver(j, data.data(), data.size());
      } else {
        held_.push(Held{now + d, seq_++, j, data});
      }
    }
  }

  // Up to 64 frames from guest I, each through its port's egress faults to
  // every other port of its wire.
  void receive(size_t i) {
    for (int burst = 0; burst < 64; ++burst) {
      const ssize_t got = ::recv(h_.socks_[i].get(), frame_.data(), frame_.size(), MSG_DONTWAIT);
      if (got <= 0) break;
      h_.frames_.fetch_add(1);
      last_from_[i] = h_.now_s();
      if (i < kPorts) {
        h_.from_[i].fetch_add(1);
        h_.last_from_s_[i].store(last_from_[i]);
      }
      taken_since_sent_[i] = 0;
      const auto len = static_cast<size_t>(got);
      const FrameFate fate = shape(i, false, len, h_.now_s());
      if (fate.drop) continue;
      std::string data(frame_.data(), len);
      flip(data, fate);
      for (int c = 0; c < fate.copies; ++c) {
        for (size_t j = 0; j < n_; ++j) {
          if (j != i && h_.wires_[j] == h_.wires_[i]) towards(j, data, fate.delay_s);
        }
      }
    }
  }

  Hub& h_;
  const size_t n_;
  std::vector<bool> connected_;
  std::vector<std::deque<std::string>> queued_;
  std::vector<std::optional<double>> waiting_since_;
  std::vector<double> last_from_;
  std::vector<double> last_taken_;
  std::vector<uint64_t> taken_since_sent_;
  std::vector<double> first_taken_since_sent_;
  std::vector<sockaddr_un> dest_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;
  uint64_t seq_ = 0;
  std::vector<char> frame_ = std::vector<char>(65536 + 64);
};

void Hub::loop() { Loop(*this).run(); }

}  // namespace rdmacheck::lab
