#include "lab/hub.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "testing/temp_dir.h"

namespace rdmacheck::lab {
namespace {

sockaddr_un addr_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size());
  return a;
}

// A guest's end of its wire, as QEMU's -netdev dgram binds it.
Fd bind_guest(const std::string& path) {
  Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_un a = addr_of(path);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0) << path;
  return fd;
}

void send_to(const Fd& from, const std::string& hub, const std::string& frame) {
  const sockaddr_un a = addr_of(hub);
  ASSERT_EQ(::sendto(from.get(), frame.data(), frame.size(), 0,
                     reinterpret_cast<const sockaddr*>(&a), sizeof a),
            static_cast<ssize_t>(frame.size()));
}

std::string receive(const Fd& fd) {
  pollfd p{fd.get(), POLLIN, 0};
  if (::poll(&p, 1, 10000) != 1) return "(nothing within 10 s)";
  char buf[256];
  const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
  return n < 0 ? "(recv failed)" : std::string(buf, static_cast<size_t>(n));
}

// The guests' ends of a lab's wires, each bound as QEMU binds it, with the
// hub's socket paths beside them, in a temporary directory of their own.
struct Ports {
  explicit Ports(std::initializer_list<const char*> names) {
    for (const char* n : names) {
      hubs.push_back((dir / (std::string("hub-") + n + ".sock")).string());
      guests.push_back((dir / (std::string(n) + ".sock")).string());
      g.push_back(bind_guest(guests.back()));
    }
  }
  Ports(const Ports&) = delete;
  Ports& operator=(const Ports&) = delete;
  ~Ports() { std::filesystem::remove_all(dir); }
  std::filesystem::path dir = test_util::make_temp_dir("hub");
  std::vector<std::string> hubs;
  std::vector<std::string> guests;
  std::vector<Fd> g;
};

// Two wires of two NICs each: a frame reaches the other NIC of its own wire
// and never a NIC of the other wire.
TEST(Hub, ForwardsOnlyWithinAWire) {
  Ports w{"h1-1", "h2-1", "h1-2", "h2-2"};
  const auto& hubs = w.hubs;
  const auto& guests = w.guests;
  auto& g = w.g;
  auto hub = Hub::start(hubs, guests, {1, 1, 2, 2});
  ASSERT_TRUE(hub.ok()) << hub.error().message();

  send_to(g[0], hubs[0], "on wire 1");
  EXPECT_EQ(receive(g[1]), "on wire 1");
  send_to(g[2], hubs[2], "on wire 2");
  // h2-2's first frame is wire 2's: wire 1's frame never reached it.
  EXPECT_EQ(receive(g[3]), "on wire 2");
  EXPECT_EQ((*hub)->frames_from(0), 1u);
  EXPECT_EQ((*hub)->frames_from(2), 1u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ((*hub)->unheard_to(i), 0u) << i;
  EXPECT_FALSE(Hub::start(hubs, guests, {1, 2}).ok()) << "a wire for each port";
  hub->reset();
}

SwitchFault switch_fault(const std::string& spec) {
  auto f = parse_switch_fault(spec, 2, 1);
  EXPECT_TRUE(f.ok()) << spec;
  return f.ok() ? *f : SwitchFault{};
}

// Switch faults act on their port and direction only, count what they did,
// and go away when cleared. Synchronised on frames, not on time: a frame
// sent after the one the fault drops arrives, so the drop has happened.
TEST(Hub, SwitchFaultsActOnTheirPortAndDirectionAndAreCounted) {
  Ports w{"h1-1", "h2-1"};
  const auto& hubs = w.hubs;
  const auto& guests = w.guests;
  auto& g = w.g;
  auto hub = Hub::start(hubs, guests, {1, 1}, 42);
  ASSERT_TRUE(hub.ok()) << hub.error().message();
  Hub& h = **hub;
  EXPECT_FALSE(h.add_fault(2, switch_fault("switch-loss:100@h2"))) << "no port 2";

  ASSERT_TRUE(h.add_fault(1, switch_fault("switch-loss:100@h2:in")));
  send_to(g[0], hubs[0], "lost on the way to h2");
  send_to(g[1], hubs[1], "h2 still sends");  // h2's out direction has no fault
  EXPECT_EQ(receive(g[0]), "h2 still sends");
  auto r = h.switch_report(1);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].spec, "switch-loss:100@h2:in");
  EXPECT_EQ(r.in.lost, 1u);
  EXPECT_EQ(r.in.frames, 1u);
  EXPECT_EQ(r.out.frames, 0u) << "the out direction has no fault to count";
  EXPECT_EQ(h.switch_report(0).in.frames, 0u);

  h.clear_faults();
  ASSERT_TRUE(h.add_fault(1, switch_fault("switch-dup:100@h2")));
  send_to(g[0], hubs[0], "twice");
  EXPECT_EQ(receive(g[1]), "twice");
  EXPECT_EQ(receive(g[1]), "twice");
  EXPECT_EQ(h.switch_report(1).in.duplicated, 1u);

  h.clear_faults();
  ASSERT_TRUE(h.add_fault(1, switch_fault("switch-delay:50@h2:in")));
  const auto sent = std::chrono::steady_clock::now();
  send_to(g[0], hubs[0], "held");
  EXPECT_EQ(receive(g[1]), "held");
  EXPECT_GE(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(50));
  EXPECT_EQ(h.switch_report(1).in.delayed, 1u);

  // A timed fault waits for the run to begin.
  h.clear_faults();
  SwitchFault later = switch_fault("switch-loss:100@h2:in");
  later.at_s = 0;
  ASSERT_TRUE(h.add_fault(1, later));
  send_to(g[0], hubs[0], "before the run");
  EXPECT_EQ(receive(g[1]), "before the run");
  h.begin_run();
  send_to(g[0], hubs[0], "lost in the run");
  send_to(g[1], hubs[1], "marker");
  EXPECT_EQ(receive(g[0]), "marker");
  // Counters cover the hub's whole life: clearing the faults keeps them.
  EXPECT_EQ(h.switch_report(1).in.lost, 2u);
  EXPECT_EQ(h.switch_report(1).ever,
            (std::vector<std::string>{"switch-loss:100@h2:in", "switch-dup:100@h2",
                                      "switch-delay:50@h2:in", "switch-loss:100@h2:in"}))
      << "every fault the port had, cleared or not, for the wire report";
  hub->reset();
}

// A guest whose QEMU stops reading its socket and sends nothing is a stall:
// the hub measures how long frames waited for it untaken. A guest that reads
// what reaches it, however little it sends, is none.
TEST(Hub, AGuestThatTakesNoFrameAndSendsNoneIsAStall) {
  Ports w{"h1", "h2", "h3"};
  const auto& hubs = w.hubs;
  const auto& guests = w.guests;
  auto& g = w.g;
  auto hub = Hub::start(hubs, guests);
  ASSERT_TRUE(hub.ok()) << hub.error().message();
  auto& h = **hub;
  // h1 sends until h2's socket (never read) is full and the hub queues for
  // it; h3 reads everything as it comes.
  const std::string frame(200, 'x');
  for (int i = 0; i < 2000; ++i) {
    send_to(g[0], hubs[0], frame);
    ASSERT_EQ(receive(g[2]), frame) << i;
  }
  ASSERT_GT(h.max_queue_to(1), 0u) << "h2's socket never filled";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (h.longest_stall(1).seconds < 0.5 && std::chrono::steady_clock::now() < deadline) {
    pollfd none{-1, 0, 0};
    ::poll(&none, 1, 50);  // the hub measures the stall: nothing to wait for but the clock
  }
  EXPECT_GE(h.longest_stall(1).seconds, 0.5);
  EXPECT_GT(h.longest_stall(1).from_s, 0.0);
  EXPECT_EQ(h.longest_stall(2).seconds, 0.0) << "h3 took every frame";
  EXPECT_EQ(h.longest_stall(0).seconds, 0.0) << "nothing ever waited for h1";
  // Once h2 sends, the stall it was in has ended: it grows no further.
  send_to(g[1], hubs[1], "h2 is back");
  EXPECT_EQ(receive(g[0]), "h2 is back");
  const double ended = h.longest_stall(1).seconds;
  send_to(g[1], hubs[1], "marker");
  EXPECT_EQ(receive(g[0]), "marker");
  EXPECT_LT(h.longest_stall(1).seconds, ended + 0.5);
  hub->reset();
}

// A guest that takes every frame and sends none is mute, not stalled: the
// hub dates how long and counts what it took, from the first frame it took
// after its last one sent. Once it sends, that silence has ended.
TEST(Hub, AGuestThatTakesFramesAndSendsNoneIsMuteNotStalled) {
  Ports w{"h1", "h2"};
  const auto& hubs = w.hubs;
  const auto& guests = w.guests;
  auto& g = w.g;
  auto hub = Hub::start(hubs, guests);
  ASSERT_TRUE(hub.ok()) << hub.error().message();
  auto& h = **hub;
  const std::string frame(100, 'y');
  for (uint64_t i = 0; i < Hub::kMuteFrames + 50; ++i) {
    send_to(g[0], hubs[0], frame);
    ASSERT_EQ(receive(g[1]), frame) << i;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (h.longest_mute(1).seconds < 0.3 && std::chrono::steady_clock::now() < deadline) {
    pollfd none{-1, 0, 0};
    ::poll(&none, 1, 50);  // the hub measures the silence: nothing to wait for but the clock
  }
  EXPECT_GE(h.longest_mute(1).seconds, 0.3);
  EXPECT_EQ(h.longest_mute(1).taken, Hub::kMuteFrames + 50);
  EXPECT_EQ(h.longest_stall(1).seconds, 0.0) << "it took every frame: no stall";
  EXPECT_EQ(h.longest_mute(0).seconds, 0.0) << "h1 took nothing";
  send_to(g[1], hubs[1], "h2 speaks");
  EXPECT_EQ(receive(g[0]), "h2 speaks");
  const double ended = h.longest_mute(1).seconds;
  send_to(g[1], hubs[1], "marker");
  EXPECT_EQ(receive(g[0]), "marker");
  EXPECT_LT(h.longest_mute(1).seconds, ended + 0.5);
  hub->reset();
}

}  // namespace
}  // namespace rdmacheck::lab
