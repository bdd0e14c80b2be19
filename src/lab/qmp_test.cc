#include "lab/qmp.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include "base/fd.h"
#include "lab/hub.h"  // unix_addr
#include "lab/vm.h"   // qmp_socket
#include "testing/temp_dir.h"

namespace rdmacheck::lab {
namespace {

// Captured from a running lab guest (QEMU 7.2.22, Debian 1:7.2+dfsg-7+deb12u18,
// 2026-12-06): its greeting, x-query-virtio, and x-query-virtio-queue-status
// of the transmit queue (1) of its virtio-net device.
const char* kGreeting =
    R"({"QMP": {"version": {"qemu": {"micro": 22, "minor": 2, "major": 7}, "package": "Debian 1:7.2+dfsg-7+deb12u18+b3"}, "capabilities": ["oob"]}})";
const char* kVirtio =
    R"({"return": [{"name": "virtio-net", "path": "/machine/peripheral-anon/device[2]/virtio-backend"}, {"name": "virtio-9p", "path": "/machine/peripheral-anon/device[1]/virtio-backend"}, {"name": "virtio-9p", "path": "/machine/peripheral-anon/device[0]/virtio-backend"}]})";
const char* kTxQueue =
    R"({"return": {"signalled-used": 38805, "inuse": 0, "name": "virtio-net", "vring-align": 4096, "vring-desc": 101662720, "signalled-used-valid": true, "vring-num-default": 256, "vring-avail": 101666816, "queue-index": 1, "last-avail-idx": 38805, "vring-used": 101667392, "used-idx": 38805, "shadow-avail-idx": 38805, "vring-num": 256}})";

// Captured 2026-12-07 from h1's QEMU (7.2) during bench/perf, 28 minutes in,
// while h1 had sent nothing for minutes: QEMU's view of the transmit queue
// (everything it saw taken and completed) and, read with HMP's xp from the
// guest's memory, the avail ring's own index: 0x8fd4 = 36820, 238 frames the
// guest had posted and QEMU never took.
const char* kStuckTxQueue =
    R"({"return": {"signalled-used": 36582, "inuse": 0, "name": "virtio-net", "vring-align": 4096, "vring-desc": 101097472, "signalled-used-valid": true, "vring-num-default": 256, "vring-avail": 101101568, "queue-index": 1, "last-avail-idx": 36582, "vring-used": 101102144, "used-idx": 36582, "shadow-avail-idx": 36582, "vring-num": 256}})";
const char* kStuckXp = "000000000606b002: 0x8fd4\r\n";
// The healthy queue's own index, as QEMU's copy has it (38805 = 0x9795).
const char* kHealthyXp = "00000000060f5002: 0x9795\r\n";

TEST(Qmp, TheGuestsOwnAvailIndexIsReadFromItsRing) {
  const auto stuck = nlohmann::json::parse(kStuckTxQueue)["return"];
  EXPECT_EQ(avail_index_command(stuck), "xp /1hx 0x606b002");
  EXPECT_EQ(parse_xp_u16("000000000606b002: 0x8fd4\r\n"), 36820);
  EXPECT_FALSE(parse_xp_u16("Cannot access memory\r\n"));
  EXPECT_FALSE(parse_xp_u16("000000000606b002: 0x18fd4\r\n"));
  EXPECT_EQ(avail_index_command(nlohmann::json::parse(R"({"inuse": 0})")), "");
}

TEST(Qmp, VirtioNetDevicesInTheOrderTheGuestNamesThem) {
  EXPECT_EQ(virtio_net_paths(nlohmann::json::parse(kVirtio)["return"]),
            std::vector<std::string>{"/machine/peripheral-anon/device[2]/virtio-backend"});
  // Two NICs: by the device's number, not the text ("device[10]" sorts before "device[3]").
  const auto two = nlohmann::json::parse(
      R"([{"name": "virtio-net", "path": "/machine/peripheral-anon/device[10]/virtio-backend"},
          {"name": "virtio-9p", "path": "/machine/peripheral-anon/device[0]/virtio-backend"},
          {"name": "virtio-net", "path": "/machine/peripheral-anon/device[3]/virtio-backend"}])");
  EXPECT_EQ(virtio_net_paths(two),
            (std::vector<std::string>{"/machine/peripheral-anon/device[3]/virtio-backend",
                                      "/machine/peripheral-anon/device[10]/virtio-backend"}));
  EXPECT_TRUE(virtio_net_paths(nlohmann::json::object()).empty());
}

TEST(Qmp, ParsesAQueueStatus) {
  const auto s = parse_queue_status(nlohmann::json::parse(kTxQueue)["return"]);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->avail, 38805);
  EXPECT_EQ(s->last_avail, 38805);
  EXPECT_EQ(s->used, 38805);
  EXPECT_EQ(s->inuse, 0u);
  EXPECT_EQ(s->waiting(), 0);
  EXPECT_FALSE(parse_queue_status(nlohmann::json::parse(R"({"inuse": 0})")));
  EXPECT_FALSE(parse_queue_status(nlohmann::json::parse(
      R"({"inuse": -1, "last-avail-idx": 1, "used-idx": 1, "shadow-avail-idx": 1})")));
}

TEST(Qmp, TheTransmitQueueSaysWhoHoldsTheFrames) {
  EXPECT_EQ(format_tx("eth0", VirtqStatus{20151, 20151, 20151, 0}),
            "QEMU's transmit queue of eth0: the guest posted 20151, QEMU took 20151 and "
            "completed 20151 (16-bit counters)");
  // Free-running 16-bit counters wrap: 3 posted past the wrap, 1 taken.
  const VirtqStatus stuck{2, 65535, 65534, 1};
  EXPECT_EQ(stuck.waiting(), 3);
  EXPECT_EQ(format_tx("eth1", stuck),
            "QEMU's transmit queue of eth1: the guest posted 2, QEMU took 65535 and completed "
            "65534 (16-bit counters); QEMU holds 1 frame it has not sent (its network backend); "
            "3 posted frames wait untaken");
}

// A stand-in for QEMU's QMP socket that answers one client with the
// captured replies, an event between two of them, one command per line.
void serve_one(int listener, bool answer, const char* tx, const char* xp) {
  Fd c(::accept(listener, nullptr, nullptr));
  if (!c.valid()) return;
  auto say = [&](const std::string& l) {
    const std::string line = l + "\r\n";
    (void)::send(c.get(), line.data(), line.size(), MSG_NOSIGNAL);
  };
  say(kGreeting);
  if (!answer) {
    char b[256];
    while (::recv(c.get(), b, sizeof b, 0) > 0) {
    }
    return;
  }
  std::string in;
  char b[4096];
  for (;;) {
    const ssize_t got = ::recv(c.get(), b, sizeof b, 0);
    if (got <= 0) return;
    in.append(b, static_cast<size_t>(got));
    for (auto nl = in.find('\n'); nl != std::string::npos; nl = in.find('\n')) {
      const auto cmd = nlohmann::json::parse(in.substr(0, nl));
      in.erase(0, nl + 1);
      const std::string what = cmd["execute"];
      if (what == "qmp_capabilities") {
        say(R"({"return": {}})");
      } else if (what == "x-query-virtio") {
        say(R"({"timestamp": {"seconds": 1, "microseconds": 2}, "event": "NIC_RX_FILTER_CHANGED"})");
        say(kVirtio);
      } else if (what == "human-monitor-command") {
        say(nlohmann::json{{"return", xp}}.dump());
      } else if (cmd["arguments"]["queue"] == 1) {
        say(tx);
      } else {
        say(R"({"return": {"inuse": 0, "last-avail-idx": 7, "used-idx": 7, "shadow-avail-idx": 9}})");
      }
    }
  }
}

void serve_captured(Fd listener, bool answer, const char* tx, const char* xp) {
  serve_one(listener.get(), answer, tx, xp);
}

Fd listen_at(const std::string& path) {
  Fd l(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  auto a = unix_addr(path);
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a), 0);
  EXPECT_EQ(::listen(l.get(), 1), 0);
  return l;
}

// The NICs' queues as query_nic_queues reads them from a stand-in that
// answers with TX and XP, in a temp dir of its own.
Result<std::vector<NicQueues>> ask_stand_in(const char* tx, const char* xp) {
  const auto dir = test_util::make_temp_dir("qmp");
  const auto path = (dir / "h1.qmp").string();
  std::thread qemu(serve_captured, listen_at(path), true, tx, xp);
  auto q = query_nic_queues(path, deadline_in(std::chrono::seconds(10)));
  qemu.join();
  std::filesystem::remove_all(dir);
  return q;
}

TEST(Qmp, AsksEveryNicsQueuesAndSkipsEvents) {
  const auto q = ask_stand_in(kTxQueue, kHealthyXp);
  ASSERT_TRUE(q.ok()) << q.error().message();
  ASSERT_EQ(q->size(), 1u);
  EXPECT_EQ((*q)[0].tx.avail, 38805);
  EXPECT_EQ((*q)[0].rx.avail, 9);
  EXPECT_EQ((*q)[0].rx.waiting(), 2);
}

TEST(Qmp, AQemuThatStoppedLookingShowsTheFramesTheGuestPosted) {
  const auto q = ask_stand_in(kStuckTxQueue, kStuckXp);
  ASSERT_TRUE(q.ok()) << q.error().message();
  ASSERT_EQ(q->size(), 1u);
  const VirtqStatus tx = (*q)[0].tx;
  EXPECT_EQ(tx.avail, 36820);
  EXPECT_EQ(tx.last_avail, 36582);
  EXPECT_EQ(tx.waiting(), 238);
  EXPECT_NE(format_tx("eth0", tx).find("238 posted frames wait untaken"), std::string::npos)
      << format_tx("eth0", tx);
}

// The lab's end looks twice at a transmit queue that holds frames: the same
// frames untaken both times are a QEMU that stopped looking (held); frames
// it took in between are a busy one. A queue with nothing waiting gets one look.
WireCounters looked_at(const std::vector<std::pair<const char*, const char*>>& answers) {
  const auto dir = test_util::make_temp_dir("qmp");
  Fd l = listen_at(qmp_socket(dir.string(), "h1"));
  std::thread qemu([&] {
    for (const auto& [tx, xp] : answers) serve_one(l.get(), true, tx, xp);
  });
  std::vector<WireCounters> wire{WireCounters{"h1"}};
  add_qemu_queues(wire, dir.string());
  qemu.join();
  std::filesystem::remove_all(dir);
  return wire[0];
}

TEST(Qmp, FramesUntakenAtTwoLooksAreHeldAndFramesTakenBetweenAreNot) {
  const auto stuck = looked_at({{kStuckTxQueue, kStuckXp}, {kStuckTxQueue, kStuckXp}});
  ASSERT_TRUE(stuck.qemu_tx);
  EXPECT_EQ(stuck.qemu_tx->waiting(), 238);
  EXPECT_TRUE(stuck.qemu_tx_held);
  const auto busy = looked_at({{kStuckTxQueue, kStuckXp}, {kTxQueue, kHealthyXp}});
  ASSERT_TRUE(busy.qemu_tx);
  EXPECT_EQ(busy.qemu_tx->waiting(), 0);
  EXPECT_FALSE(busy.qemu_tx_held);
  const auto idle = looked_at({{kTxQueue, kHealthyXp}});
  ASSERT_TRUE(idle.qemu_tx);
  EXPECT_FALSE(idle.qemu_tx_held);
}

TEST(Qmp, AQemuThatDoesNotAnswerCostsTheDeadlineOnly) {
  const auto dir = test_util::make_temp_dir("qmp");
  const auto path = (dir / "h1.qmp").string();
  std::thread qemu(serve_captured, listen_at(path), false, kTxQueue, kHealthyXp);
  const auto t0 = Clock::now();
  const auto q = query_nic_queues(path, deadline_in(std::chrono::milliseconds(300)));
  EXPECT_FALSE(q.ok());
  EXPECT_NE(q.error().message().find("no answer before the deadline"), std::string::npos)
      << q.error().message();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  qemu.join();  // the client closed its end: the stand-in's read ends
  EXPECT_FALSE(
      query_nic_queues((dir / "none.qmp").string(), deadline_in(std::chrono::milliseconds(300)))
          .ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::lab
