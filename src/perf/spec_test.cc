#include "perf/spec.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

namespace rdmacheck::perf {
namespace {

Spec bw(Op op, std::vector<uint32_t> sizes = {65536}) {
  Spec s;
  s.op = op;
  s.sizes = std::move(sizes);
  return s;
}

TEST(Spec, DefaultsAreValid) { EXPECT_EQ(validate(Spec{}), std::nullopt); }

TEST(Spec, AllSizesAreTwoBytesToEightMiB) {
  const auto v = all_sizes();
  ASSERT_EQ(v.size(), 23u);
  EXPECT_EQ(v.front(), 2u);
  EXPECT_EQ(v.back(), 8u << 20);
  EXPECT_EQ(all_sizes(16), (std::vector<uint32_t>{2, 4, 8, 16}));
}

TEST(Spec, TransportsCarryOnlyTheirOps) {
  Spec s = bw(Op::kRead);
  s.transport = Transport::kUc;
  EXPECT_NE(validate(s), std::nullopt);
  s.op = Op::kWrite;
  EXPECT_EQ(validate(s), std::nullopt);
  s.transport = Transport::kUd;
  EXPECT_NE(validate(s), std::nullopt);
  s.op = Op::kSend;
  EXPECT_EQ(validate(s), std::nullopt);
  EXPECT_EQ(parse_enum<Transport>("xrc"), std::nullopt);
}

TEST(Spec, AtomicsMoveEightBytes) {
  EXPECT_NE(validate(bw(Op::kAtomicFadd, {16})), std::nullopt);
  EXPECT_EQ(validate(bw(Op::kAtomicCswap, {8})), std::nullopt);
}

TEST(Spec, IterationsOrDurationNotBoth) {
  Spec s;
  s.duration_s = 2;
  EXPECT_NE(validate(s), std::nullopt);
  s.iterations = 0;
  EXPECT_EQ(validate(s), std::nullopt);
  s.warmup_s = 2;
  EXPECT_NE(validate(s), std::nullopt);
  s.kind = Kind::kLat;
  s.warmup_s = 0;
  EXPECT_EQ(validate(s), std::nullopt);  // lat takes -D as bw does (perftest's lat -D)
}

TEST(Spec, WarmupOnlyWithDuration) {
  Spec s;  // bounded by iterations
  s.warmup_s = 1;
  EXPECT_NE(validate(s), std::nullopt);
  s.iterations = 0;
  s.duration_s = 2;
  EXPECT_EQ(validate(s), std::nullopt);
}

TEST(Spec, RunInfinitelyIsOneBwSizeOneWay) {
  Spec s;
  s.iterations = 0;
  s.duration_s = 5;  // the interval of the live lines
  s.run_infinitely = true;
  EXPECT_EQ(validate(s), std::nullopt);
  s.sizes = {64, 128};
  EXPECT_NE(validate(s), std::nullopt);
  s.sizes = {64};
  s.bidir = true;
  EXPECT_NE(validate(s), std::nullopt);
  s.bidir = false;
  s.kind = Kind::kLat;
  EXPECT_NE(validate(s), std::nullopt);
}

TEST(Spec, PostingKnobsMustFitTheQueue) {
  Spec s;
  s.cq_mod = 3;  // does not divide 128
  EXPECT_NE(validate(s), std::nullopt);
  s.cq_mod = 16;
  EXPECT_EQ(validate(s), std::nullopt);
  s.post_list = 129;
  EXPECT_NE(validate(s), std::nullopt);
  s.post_list = 8;
  s.qps = 17;
  EXPECT_NE(validate(s), std::nullopt);
  s.qps = 2;
  s.sizes = {0};
  EXPECT_NE(validate(s), std::nullopt);
}

TEST(Spec, RemoteAccessIsOnlyWhatTheOpNeeds) {
  EXPECT_EQ(remote_access(Op::kWrite), IBV_ACCESS_REMOTE_WRITE);
  EXPECT_EQ(remote_access(Op::kRead), IBV_ACCESS_REMOTE_READ);
  EXPECT_EQ(remote_access(Op::kAtomicFadd), IBV_ACCESS_REMOTE_ATOMIC);
  EXPECT_EQ(remote_access(Op::kSend), 0);
  EXPECT_EQ(parse_enum<Op>("atomic_cswap"), Op::kAtomicCswap);
  EXPECT_EQ(parse_enum<Op>("bogus"), std::nullopt);
}

}  // namespace
}  // namespace rdmacheck::perf
