#include "serve/admission.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace rdmacheck::serve {
namespace {

using Ticket = Admission::Ticket;

Limits small() {
  Limits l;
  l.startups = 3;
  l.startups_per_source = 2;
  l.sessions = 2;
  l.sessions_per_source = 1;
  l.pinned_bytes = 1 << 20;
  return l;
}

std::string refusal(std::variant<Ticket, std::string>&& v) {
  auto* why = std::get_if<std::string>(&v);
  return why != nullptr ? *why : "";
}

TEST(Admission, HandshakesAreCountedPerAddressAndInTotal) {
  Admission a(small());
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.0.1");
  ASSERT_TRUE(std::holds_alternative<Ticket>(t1));
  ASSERT_TRUE(std::holds_alternative<Ticket>(t2));
  EXPECT_EQ(refusal(a.enter("10.0.0.1")),
            "server busy: 2 connections from 10.0.0.1 are already in their handshake");
  auto t3 = a.enter("10.0.2.1");
  ASSERT_TRUE(std::holds_alternative<Ticket>(t3));
  EXPECT_EQ(refusal(a.enter("10.0.3.1")),
            "server busy: 3 connections are already in their handshake");
  EXPECT_EQ(a.usage().startups, 3);
}

// Many addresses of one network (an IPv4 /24, an IPv6 /64: a single host
// can hold a whole /64) fill at most three quarters of the handshake slots:
// the last quarter is kept for networks below their share (a quarter), so
// clients from other networks still get in; a slot freed is free for all.
TEST(Admission, OneNetworkCannotTakeTheSlotsKeptForOthers) {
  Admission a(Limits{});  // 32 slots, 4 per address: a share is 8
  std::vector<std::optional<Ticket>> held;
  for (int i = 1; i <= 24; ++i) {
    auto t = a.enter("198.51.100." + std::to_string(i));
    ASSERT_TRUE(std::holds_alternative<Ticket>(t)) << i;
    held.emplace_back(std::move(std::get<Ticket>(t)));
  }
  EXPECT_EQ(refusal(a.enter("198.51.100.77")),
            "server busy: 24 connections from 198.51.100.0/24 are already in their handshake "
            "(the last slots are kept for other networks)");
  for (int i = 1; i <= 8; ++i) {
    auto t = a.enter("2001:db8:1:" + std::to_string(i) + "::1");
    ASSERT_TRUE(std::holds_alternative<Ticket>(t)) << i;
    held.emplace_back(std::move(std::get<Ticket>(t)));
  }
  EXPECT_EQ(refusal(a.enter("203.0.113.5")),
            "server busy: 32 connections are already in their handshake");
  held[0].reset();  // 198.51.100.1's handshake ends: the slot is over its network's share
  EXPECT_NE(refusal(a.enter("198.51.100.77")).find("from 198.51.100.0/24"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<Ticket>(a.enter("203.0.113.5")));
}

// A single host with a /64: its addresses are one network.
TEST(Admission, AnIpv6HostIsCountedAsItsSlash64) {
  Limits l;
  l.startups = 8;  // a share is max(4 per address, 8 / 4) = 4
  Admission a(l);
  std::vector<std::optional<Ticket>> held;
  for (int i = 1; i <= 4; ++i) {
    auto t = a.enter("2001:db8:1:2::" + std::to_string(i));
    ASSERT_TRUE(std::holds_alternative<Ticket>(t)) << i;
    held.emplace_back(std::move(std::get<Ticket>(t)));
  }
  EXPECT_EQ(refusal(a.enter("2001:db8:1:2:ffff:1:2:3")),
            "server busy: 4 connections from 2001:db8:1:2::/64 are already in their handshake "
            "(the last slots are kept for other networks)");
  EXPECT_TRUE(std::holds_alternative<Ticket>(a.enter("2001:db8:1:3::1")));
  EXPECT_EQ(prefix_of("10.1.2.3"), "10.1.2.0/24");
  EXPECT_EQ(prefix_of("fd00::1:2:3:4"), "fd00::/64");
  EXPECT_EQ(prefix_of("fd00::1:2:3:4:5"), "fd00:0:0:1::/64");
  EXPECT_EQ(prefix_of("not an address"), "not an address");
}

// One identity of a key ring (a leaked key, a runaway script) holds at most
// sessions_per_identity sessions; clients without one are not capped by it.
TEST(Admission, SessionsAreCappedPerIdentity) {
  Limits l;
  l.sessions_per_identity = 2;
  Admission a(l);
  std::vector<std::optional<Ticket>> held;
  for (const char* from : {"10.0.0.1", "10.0.2.1", "10.0.3.1", "10.0.0.4"}) {
    auto t = a.enter(from);
    ASSERT_TRUE(std::holds_alternative<Ticket>(t));
    held.emplace_back(std::move(std::get<Ticket>(t)));
  }
  EXPECT_FALSE(held[0]->promote("fleet"));
  EXPECT_FALSE(held[1]->promote("fleet"));
  EXPECT_EQ(held[2]->promote("fleet").value_or(""),
            "server busy: 2 sessions of identity 'fleet' already running");
  EXPECT_FALSE(held[3]->promote("h7"));
  held[0].reset();  // one of fleet's sessions ends
  EXPECT_FALSE(held[2]->promote("fleet"));
  EXPECT_EQ(a.usage().sessions, 3);
}

// Monitor probes have slots of their own: a server whose sessions are all
// taken still answers probes, a fleet's probes never take a test's slot, and
// a shared fleet identity is not capped; per address and in total they are.
TEST(Admission, ProbesHaveSlotsOfTheirOwn) {
  Limits l = small();
  l.startups = 16;
  l.startups_per_source = 8;
  l.sessions_per_identity = 1;
  l.probes = 3;
  l.probes_per_source = 2;
  Admission a(l);
  std::vector<std::optional<Ticket>> held;
  auto enter = [&](const char* from) -> Ticket& {
    auto t = a.enter(from);
    EXPECT_TRUE(std::holds_alternative<Ticket>(t)) << from;
    return held.emplace_back(std::move(std::get<Ticket>(t))).value();
  };
  EXPECT_FALSE(enter("10.0.0.1").promote("fleet"));
  EXPECT_FALSE(enter("10.0.2.1").promote("h2"));
  EXPECT_EQ(enter("10.0.3.1").promote(), "server busy: 2 sessions already running");
  // Every session slot is taken; probes of the fleet identity still get in.
  EXPECT_FALSE(enter("10.0.0.1").promote_probe());
  EXPECT_FALSE(enter("10.0.0.1").promote_probe());
  EXPECT_EQ(enter("10.0.0.1").promote_probe(),
            "server busy: 2 probes from 10.0.0.1 already running");
  EXPECT_FALSE(enter("10.0.4.1").promote_probe());
  EXPECT_EQ(enter("10.0.5.1").promote_probe(),
            "server busy: 3 probes already running (serve --max-probes)");
  EXPECT_EQ(a.usage().probes, 3);
  EXPECT_EQ(a.usage().sessions, 2);
  held[3].reset();  // a probe ends: its slot is free, the sessions' untouched
  EXPECT_FALSE(enter("10.0.5.1").promote_probe());
  EXPECT_EQ(a.usage().probes, 3);
  EXPECT_EQ(a.usage().sessions, 2);
  held.clear();
  EXPECT_EQ(a.usage().probes, 0);
  EXPECT_EQ(a.usage().startups, 0);
}

// One identity holds at most half the pinned-memory budget: a leaked key
// cannot pin all of it; what it frees is its own again.
TEST(Admission, OneIdentityPinsAtMostHalfTheBudget) {
  Admission a(small());  // 1 MiB
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.2.1");
  auto t3 = a.enter("10.0.3.1");
  ASSERT_FALSE(std::get<Ticket>(t1).promote("fleet"));
  ASSERT_FALSE(std::get<Ticket>(t2).promote("fleet"));
  EXPECT_FALSE(std::get<Ticket>(t1).pin(400 << 10));
  EXPECT_EQ(std::get<Ticket>(t2).pin(200 << 10).value_or(""),
            "server busy: a buffer of 200 KiB would take identity 'fleet' over half this "
            "server's pinned-memory budget (400 of 512 KiB in use by it); try a smaller -s or "
            "later");
  EXPECT_FALSE(std::get<Ticket>(t2).pin(100 << 10));  // within its half
  EXPECT_FALSE(std::get<Ticket>(t3).pin(400 << 10));  // no identity: the whole budget
  EXPECT_EQ(a.usage().pinned, 900u << 10);
}

TEST(Admission, APromotedHandshakeFreesItsSlotForTheNext) {
  Admission a(small());
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.0.1");
  ASSERT_FALSE(std::get<Ticket>(t1).promote());
  EXPECT_EQ(a.usage().startups, 1);
  EXPECT_EQ(a.usage().sessions, 1);
  // One session per address: the second waits as a handshake and is refused.
  EXPECT_EQ(std::get<Ticket>(t2).promote().value_or(""),
            "server busy: 1 sessions from 10.0.0.1 already running");
  auto t3 = a.enter("10.0.0.1");  // the promoted one left room for a handshake
  EXPECT_TRUE(std::holds_alternative<Ticket>(t3));
  auto t4 = a.enter("10.0.2.1");
  ASSERT_FALSE(std::get<Ticket>(t4).promote());
  auto t5 = a.enter("10.0.3.1");
  EXPECT_EQ(std::get<Ticket>(t5).promote().value_or(""), "server busy: 2 sessions already running");
}

TEST(Admission, EveryHalfOfEveryBufferCountsAgainstTheBudget) {
  Admission a(small());
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.2.1");
  Ticket& first = std::get<Ticket>(t1);
  EXPECT_FALSE(first.pin(600 << 10));
  const auto why = std::get<Ticket>(t2).pin(600 << 10);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("exceed this server's pinned-memory budget (600 of 1024 KiB in use)"),
            std::string::npos)
      << *why;
  EXPECT_EQ(a.usage().pinned, 600u << 10);
  EXPECT_FALSE(std::get<Ticket>(t2).pin(400 << 10));
  EXPECT_EQ(a.usage().pinned, 1000u << 10);
}

// A buffer over the whole budget never fits: no "busy", no "later".
TEST(Admission, ABufferOverTheWholeBudgetIsRefusedAsSuchNotAsBusy) {
  Admission a(small());
  auto t = a.enter("10.0.0.1");
  const auto why = std::get<Ticket>(t).pin((1 << 20) + 1);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "refused: a buffer of 1025 KiB is over this server's whole pinned-memory budget "
            "(1024 KiB, serve --max-pinned); use a smaller -s");
  EXPECT_EQ(a.usage().pinned, 0u);
}

TEST(Admission, ASlotAndItsMemoryAreFreeTheMomentTheTicketGoes) {
  Admission a(small());
  {
    auto t = a.enter("10.0.0.1");
    Ticket moved(std::move(std::get<Ticket>(t)));  // the session thread owns it
    ASSERT_FALSE(moved.promote());
    ASSERT_FALSE(moved.pin(1 << 20));
    EXPECT_EQ(a.usage().sessions, 1);
  }
  EXPECT_EQ(a.usage().sessions, 0);
  EXPECT_EQ(a.usage().startups, 0);
  EXPECT_EQ(a.usage().pinned, 0u);
  // And the same address is welcome again, to its full share.
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.0.1");
  EXPECT_TRUE(std::holds_alternative<Ticket>(t2));
}

// /proc/meminfo's first lines, captured on the Debian 12 build host (24 GiB).
constexpr const char* kMeminfo24G =
    "MemTotal:       24683584 kB\n"
    "MemFree:        19784232 kB\n"
    "MemAvailable:   22377932 kB\n";

TEST(Admission, TheDefaultBudgetIsASixteenthOfMemoryAtMost2GiBWithinMemlock) {
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 0), 24683584ull * 1024 / 16);
  // A 512 GiB node keeps all but 2 GiB for its real work.
  EXPECT_EQ(default_pinned_budget("MemTotal:       536870912 kB\n", 0), 2ull << 30);
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 512ull << 20), 512ull << 20);
  // Never below what one default session needs, whatever a tiny limit says.
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 8ull << 20), 64ull << 20);
  EXPECT_EQ(default_pinned_budget("", 0), 1ull << 30);
}

}  // namespace
}  // namespace rdmacheck::serve
