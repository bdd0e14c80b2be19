#include "lab/switch_fault.h"

#include <gtest/gtest.h>

namespace rdmacheck::lab {
namespace {

TEST(SwitchFault, EveryKindParsesItsArguments) {
  auto loss = parse_switch_fault("switch-loss:5@h3", 4, 1);
  ASSERT_TRUE(loss.ok()) << loss.error().message();
  EXPECT_EQ(loss->kind, SwitchFaultKind::kLoss);
  EXPECT_EQ(loss->host, "h3");
  EXPECT_EQ(loss->nic, 1);
  EXPECT_EQ(loss->direction, PortDirection::kBoth);
  EXPECT_EQ(loss->percent, 5);
  EXPECT_EQ(loss->spec, "switch-loss:5@h3");

  auto burst = parse_switch_fault("switch-burst-loss:2/8@h2-2:in", 2, 2);
  ASSERT_TRUE(burst.ok()) << burst.error().message();
  EXPECT_EQ(burst->kind, SwitchFaultKind::kBurstLoss);
  EXPECT_EQ(burst->nic, 2);
  EXPECT_EQ(burst->direction, PortDirection::kIn);
  EXPECT_EQ(burst->percent, 2);
  EXPECT_EQ(burst->burst, 8);
  EXPECT_EQ(parse_switch_fault("switch-burst-loss:2@h2", 2, 1)->burst, 4) << "default burst";

  auto delay = parse_switch_fault("switch-delay:10/3@h1:out", 2, 1);
  ASSERT_TRUE(delay.ok()) << delay.error().message();
  EXPECT_EQ(delay->ms, 10);
  EXPECT_EQ(delay->jitter_ms, 3);
  EXPECT_EQ(delay->direction, PortDirection::kOut);
  EXPECT_EQ(parse_switch_fault("switch-reorder:25@h1", 2, 1)->ms, 2) << "default gap";
  EXPECT_EQ(parse_switch_fault("switch-rate:1@h1", 2, 1)->mbit, 1);
  EXPECT_EQ(parse_switch_fault("switch-maxsize:1100@h1", 2, 1)->max_bytes, 1100u);
  auto flap = parse_switch_fault("switch-flap:2/10@h2", 2, 1);
  ASSERT_TRUE(flap.ok()) << flap.error().message();
  EXPECT_EQ(flap->down_s, 2);
  EXPECT_EQ(flap->period_s, 10);
  EXPECT_TRUE(parse_switch_fault("switch-dup:1@h2", 2, 1).ok());
  EXPECT_TRUE(parse_switch_fault("switch-corrupt:0.5@h2", 2, 1).ok());
}

TEST(SwitchFault, BadSpellingsSayWhatWasExpected) {
  struct Case {
    const char* spec;
    const char* says;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"switch-loss:5", "names its port"},
           {"switch-loss:0@h2", "expected switch-loss:PCT"},
           {"switch-loss:101@h2", "expected switch-loss:PCT"},
           {"switch-loss:5x@h2", "expected switch-loss:PCT"},
           {"switch-loss@h2", "expected switch-loss:PCT"},
           {"switch-burst-loss:100@h2", "0 < PCT < 100"},
           {"switch-burst-loss:5/0.5@h2", "BURST >= 1"},
           {"switch-delay:5/6@h2", "JITTER <= MS"},
           {"switch-flap:10/5@h2", "DOWN_S < PERIOD_S"},
           {"switch-flap:3@h2", "DOWN_S/PERIOD_S"},
           {"switch-maxsize:20@h2", "60 <= BYTES"},
           {"switch-maxsize:1000.5@h2", "BYTES"},
           {"switch-rate:0@h2", "MBIT"},
           {"switch-lost:5@h2", "unknown switch fault 'switch-lost': choose switch-loss, "},
           {"switch-loss:5@h9", "unknown host 'h9'"},
           {"switch-loss:5@h2-3", "unknown NIC 'h2-3'"},
           {"switch-loss:5@h2:sideways", ":in (towards the host) or :out"},
           {"switch-loss:5@h2:both", ":in (towards the host) or :out"},
       }) {
    auto f = parse_switch_fault(c.spec, 2, 2);
    ASSERT_FALSE(f.ok()) << c.spec;
    EXPECT_NE(f.error().message().find(c.says), std::string::npos)
        << c.spec << ": " << f.error().message();
  }
}

TEST(SwitchFault, TimedFaultsWaitForTheRunAndEnd) {
  auto t = parse_timed_fault("10:switch-loss:5@h2", "--fault-at");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->first, 10);
  EXPECT_EQ(t->second, "switch-loss:5@h2");
  for (const char* bad : {"switch-loss:5@h2", "x:switch-loss:5@h2", "-1:switch-loss:5@h2", "5:"}) {
    auto b = parse_timed_fault(bad, "--fault-until");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.error().message().find("expected SECONDS:FAULT"), std::string::npos);
    EXPECT_EQ(b.error().call, "--fault-until");
  }
  SwitchFault f;
  EXPECT_TRUE(f.active_at(std::nullopt)) << "untimed: from the start, before the run too";
  f.at_s = 10;
  EXPECT_FALSE(f.active_at(std::nullopt));
  EXPECT_FALSE(f.active_at(9.9));
  EXPECT_TRUE(f.active_at(10));
  f.until_s = 20;
  EXPECT_TRUE(f.active_at(19.9));
  EXPECT_FALSE(f.active_at(20));
  SwitchFault until_only;
  until_only.until_s = 5;
  EXPECT_TRUE(until_only.active_at(std::nullopt));
  EXPECT_TRUE(until_only.active_at(4));
  EXPECT_FALSE(until_only.active_at(5));
}

}  // namespace
}  // namespace rdmacheck::lab
