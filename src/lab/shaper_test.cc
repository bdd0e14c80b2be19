#include "lab/shaper.h"

#include <gtest/gtest.h>

namespace rdmacheck::lab {
namespace {

SwitchFault fault(const std::string& spec) {
  auto f = parse_switch_fault(spec, 4, 2);
  EXPECT_TRUE(f.ok()) << spec << ": " << (f.ok() ? "" : f.error().message());
  return f.ok() ? *f : SwitchFault{};
}

// N frames of BYTES, one every STEP seconds from T0; how many were dropped.
int drops(Shaper& s, int n, size_t bytes = 1000, double step = 0.001, double t0 = 0,
          std::optional<double> run = std::nullopt) {
  int d = 0;
  for (int i = 0; i < n; ++i) {
    const double t = t0 + step * i;
    const auto run_t = run ? std::optional<double>(*run + step * i) : std::nullopt;
    d += s.decide(bytes, t, run_t).drop ? 1 : 0;
  }
  return d;
}

TEST(Shaper, NoFaultPassesEverythingUntouched) {
  Shaper s;
  const auto f = s.decide(1500, 0, std::nullopt);
  EXPECT_FALSE(f.drop);
  EXPECT_EQ(f.delay_s, 0);
  EXPECT_EQ(f.copies, 1);
  EXPECT_FALSE(f.flip_bit);
}

TEST(Shaper, LossIsItsRateAndRepeatableForASeed) {
  Shaper a(7);
  Shaper b(7);
  a.add(fault("switch-loss:10@h1"));
  b.add(fault("switch-loss:10@h1"));
  const int da = drops(a, 20000);
  EXPECT_EQ(drops(b, 20000), da) << "same seed, same choices";
  EXPECT_GT(da, 1800);
  EXPECT_LT(da, 2200);
  EXPECT_EQ(a.counters().lost, static_cast<uint64_t>(da));
  EXPECT_EQ(a.counters().frames, 20000u);
}

TEST(Shaper, BurstLossHasItsRateInBurstsOfItsLength) {
  Shaper s(3);
  s.add(fault("switch-burst-loss:5/8@h1"));
  int lost = 0;
  int bursts = 0;
  bool prev = false;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const bool d = s.decide(100, i * 1e-4, std::nullopt).drop;
    lost += d ? 1 : 0;
    bursts += (d && !prev) ? 1 : 0;
    prev = d;
  }
  EXPECT_NEAR(lost / static_cast<double>(n), 0.05, 0.01);
  ASSERT_GT(bursts, 0);
  EXPECT_NEAR(lost / static_cast<double>(bursts), 8, 1.5) << "mean burst length";
  // Plain loss at the same rate has bursts of about one frame.
  Shaper plain(3);
  plain.add(fault("switch-loss:5@h1"));
  int plain_lost = 0;
  int plain_bursts = 0;
  prev = false;
  for (int i = 0; i < n; ++i) {
    const bool d = plain.decide(100, i * 1e-4, std::nullopt).drop;
    plain_lost += d ? 1 : 0;
    plain_bursts += (d && !prev) ? 1 : 0;
    prev = d;
  }
  EXPECT_LT(plain_lost / static_cast<double>(plain_bursts), 1.2);
}

TEST(Shaper, FlapDropsEverythingWhileDownAndNothingWhileUp) {
  Shaper s;
  s.add(fault("switch-flap:2/10@h1"));
  // The port goes down when the fault starts (t = 100 here), for 2 s of every 10 s.
  EXPECT_EQ(drops(s, 1, 1000, 0, 100.0), 1);
  EXPECT_EQ(drops(s, 19, 1000, 0.1, 100.1), 19) << "down 100..102";
  EXPECT_EQ(drops(s, 80, 1000, 0.1, 102.0), 0) << "up 102..110";
  EXPECT_EQ(drops(s, 20, 1000, 0.1, 110.0), 20) << "down again 110..112";
  EXPECT_EQ(s.counters().flaps, 2u);
  EXPECT_EQ(s.counters().flap_dropped, 40u);
}

// A port's two directions are two shapers; a flap takes both down at once,
// whenever each sees its first frame (stop 32's matrix: out of phase, a 4/7
// flap left no moment with both directions up).
TEST(Shaper, BothDirectionsOfAPortFlapInPhase) {
  SwitchFault f = fault("switch-flap:2/10@h1");
  Shaper in, out;
  in.add(f, 0);
  out.add(f, 0);
  EXPECT_TRUE(in.decide(100, 1.0, std::nullopt).drop) << "down 0..2";
  EXPECT_FALSE(out.decide(100, 3.0, std::nullopt).drop) << "its first frame, at 3: up";
  EXPECT_FALSE(in.decide(100, 3.0, std::nullopt).drop);
  EXPECT_TRUE(out.decide(100, 10.5, std::nullopt).drop) << "down 10..12, both";
  EXPECT_TRUE(in.decide(100, 10.5, std::nullopt).drop);
  // --fault-at 5: the phase counts from the run's fifth second.
  f.at_s = 5;
  Shaper a, b;
  a.add(f, 0);
  b.add(f, 0);
  EXPECT_TRUE(a.decide(100, 50.0, 5.0).drop) << "run 5..7: down";
  EXPECT_FALSE(b.decide(100, 52.5, 7.5).drop) << "its first frame, at run 7.5: up";
  EXPECT_FALSE(a.decide(100, 52.5, 7.5).drop);
}

TEST(Shaper, TimedFaultsActOnlyInTheirWindowOfTheRun) {
  SwitchFault f = fault("switch-loss:100@h1");
  f.at_s = 5;
  f.until_s = 8;
  Shaper s;
  s.add(f);
  EXPECT_EQ(drops(s, 10, 1000, 1, 0, std::nullopt), 0) << "before the run began";
  EXPECT_EQ(drops(s, 5, 1000, 1, 50, 0.0), 0) << "run seconds 0..4";
  EXPECT_EQ(drops(s, 3, 1000, 1, 55, 5.0), 3) << "run seconds 5..7";
  EXPECT_EQ(drops(s, 5, 1000, 1, 58, 8.0), 0) << "from 8 on";
}

TEST(Shaper, RateCapSpacesFramesAndTailDropsBeyondItsBuffer) {
  Shaper s;
  s.add(fault("switch-rate:1@h1"));  // 125,000 bytes a second
  // 1250-byte frames all at t = 0: each waits for the ones before it.
  const auto first = s.decide(1250, 0, std::nullopt);
  const auto second = s.decide(1250, 0, std::nullopt);
  EXPECT_NEAR(first.delay_s, 0.01, 1e-9);
  EXPECT_NEAR(second.delay_s, 0.02, 1e-9);
  int dropped = 0;
  for (int i = 0; i < 100; ++i) dropped += s.decide(1250, 0, std::nullopt).drop ? 1 : 0;
  // 64 KiB of buffer holds 52 of them; the rest are tail-dropped.
  EXPECT_EQ(dropped, 102 - 52);
  EXPECT_EQ(s.counters().rate_dropped, 50u);
  // Once the queue has drained, a frame waits only for itself.
  EXPECT_NEAR(s.decide(1250, 100, std::nullopt).delay_s, 0.01, 1e-9);
}

TEST(Shaper, MaxSizeDropsOnlyLargerFrames) {
  Shaper s;
  s.add(fault("switch-maxsize:1100@h1"));
  EXPECT_FALSE(s.decide(1100, 0, std::nullopt).drop);
  EXPECT_TRUE(s.decide(1101, 0, std::nullopt).drop);
  EXPECT_EQ(s.counters().size_dropped, 1u);
}

TEST(Shaper, DelayJitterDuplicateCorruptAndReorder) {
  Shaper d(5);
  d.add(fault("switch-delay:10/4@h1"));
  double lo = 1;
  double hi = 0;
  for (int i = 0; i < 2000; ++i) {
    const double s = d.decide(100, i, std::nullopt).delay_s;
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  }
  EXPECT_GE(lo, 0.006);
  EXPECT_LE(hi, 0.014);
  EXPECT_LT(lo, 0.0065) << "jitter spreads the delay";
  EXPECT_GT(hi, 0.0135);

  Shaper dup(5);
  dup.add(fault("switch-dup:100@h1"));
  EXPECT_EQ(dup.decide(100, 0, std::nullopt).copies, 2);

  Shaper c(5);
  c.add(fault("switch-corrupt:100@h1"));
  for (int i = 0; i < 1000; ++i) {
    const auto f = c.decide(60, 0, std::nullopt);
    ASSERT_TRUE(f.flip_bit);
    EXPECT_GE(*f.flip_bit, 14u * 8) << "never the Ethernet header";
    EXPECT_LT(*f.flip_bit, 60u * 8);
  }

  Shaper r(5);
  r.add(fault("switch-reorder:50/3@h1"));
  int back = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto f = r.decide(100, i, std::nullopt);
    if (f.delay_s > 0) {
      EXPECT_NEAR(f.delay_s, 0.003, 1e-12);
      ++back;
    }
  }
  EXPECT_GT(back, 400);
  EXPECT_LT(back, 600);
  EXPECT_EQ(r.counters().reordered, static_cast<uint64_t>(back));
}

TEST(Shaper, FaultsActInTheOrderOfTheSwitchNotOfTheCommandLine) {
  // A frame over the size limit is dropped before the rate cap counts it.
  Shaper s;
  s.add(fault("switch-rate:1@h1"));
  s.add(fault("switch-maxsize:100@h1"));
  EXPECT_TRUE(s.decide(1250, 0, std::nullopt).drop);
  EXPECT_NEAR(s.decide(100, 0, std::nullopt).delay_s, 100 / 125000.0, 1e-12)
      << "the dropped frame took no room in the rate cap's queue";
  EXPECT_EQ(s.counters().size_dropped, 1u);
}

}  // namespace
}  // namespace rdmacheck::lab
