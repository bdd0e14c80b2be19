#include "serve/admission.h"

#include <gtest/gtest.h>

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
  auto t3 = a.enter("10.0.0.2");
  ASSERT_TRUE(std::holds_alternative<Ticket>(t3));
  EXPECT_EQ(refusal(a.enter("10.0.0.3")),
            "server busy: 3 connections are already in their handshake");
  EXPECT_EQ(a.usage().startups, 3);
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
  auto t4 = a.enter("10.0.0.2");
  ASSERT_FALSE(std::get<Ticket>(t4).promote());
  auto t5 = a.enter("10.0.0.3");
  EXPECT_EQ(std::get<Ticket>(t5).promote().value_or(""), "server busy: 2 sessions already running");
}

TEST(Admission, EveryHalfOfEveryBufferCountsAgainstTheBudget) {
  Admission a(small());
  auto t1 = a.enter("10.0.0.1");
  auto t2 = a.enter("10.0.0.2");
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

TEST(Admission, TheDefaultBudgetIsAnEighthOfMemoryWithinMemlock) {
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 0), 24683584ull * 1024 / 8);
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 512ull << 20), 512ull << 20);
  // Never below what one default session needs, whatever a tiny limit says.
  EXPECT_EQ(default_pinned_budget(kMeminfo24G, 8ull << 20), 64ull << 20);
  EXPECT_EQ(default_pinned_budget("", 0), 1ull << 30);
}

}  // namespace
}  // namespace rdmacheck::serve
