#include "conn/exposure.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include "proto/kinds.h"

namespace rdmacheck::conn {
namespace {

TEST(BufferLayout, EachRegionStartsOnItsOwnPageAndNothingIsSharedBetweenThem) {
  // A 4 KiB ping's half (RC): the receive slot starts on the next page.
  const BufferLayout rc = buffer_layout(4096, 1, 4096);
  EXPECT_EQ(rc.send_bytes, 4096u);
  EXPECT_EQ(rc.recv_offset, 4096u);
  EXPECT_EQ(rc.recv_bytes, 4096u);
  EXPECT_EQ(rc.total, 8192u);
  // UD ping: 1024 + 40 bytes a half, four receive slots side by side.
  const BufferLayout ud = buffer_layout(1064, 4, 4096);
  EXPECT_EQ(ud.send_bytes, 1064u);
  EXPECT_EQ(ud.recv_offset, 4096u);
  EXPECT_EQ(ud.recv_bytes, 4 * 1064u);
  EXPECT_EQ(ud.total, 4096u + 8192u);
  // The smallest half (64 bytes) still keeps the regions on separate pages.
  const BufferLayout small = buffer_layout(64, 1, 4096);
  EXPECT_EQ(small.recv_offset, 4096u);
  EXPECT_EQ(small.total, 8192u);
}

TEST(BufferLayout, NoRegionReachesPastTheAllocationAndTheTotalIsWhatIsPinned) {
  for (size_t page : {4096u, 65536u}) {
    for (size_t half : {64u, 4095u, 4096u, 4097u, 65576u, 8u << 20}) {
      for (uint32_t slots : {0u, 1u, 4u}) {
        const BufferLayout l = buffer_layout(half, slots, page);
        EXPECT_GE(l.recv_offset, l.send_bytes);
        EXPECT_EQ(l.recv_offset % page, 0u);
        EXPECT_EQ(l.total % page, 0u);
        EXPECT_LE(l.recv_offset + l.recv_bytes, l.total);
        EXPECT_LT(l.total - (l.recv_offset + l.recv_bytes), page);  // no page pinned for nothing
        EXPECT_EQ(l.recv_bytes, half * (slots == 0 ? 1 : slots));
      }
    }
  }
}

TEST(Iova, IsPageAlignedNonZeroAndBelowTheCanonicalHalf) {
  EXPECT_EQ(iova_from_random(0, 4096), 4096u);
  EXPECT_EQ(iova_from_random(0xfff, 4096), 4096u);
  EXPECT_EQ(iova_from_random(UINT64_MAX, 4096), (uint64_t{1} << 47) - 4096);
  EXPECT_EQ(iova_from_random(0x123456789abcdefull, 4096), 0x456789abc000ull);
  EXPECT_EQ(iova_from_random(0x123456789abcdefull, 65536), 0x456789ab0000ull);
}

TEST(Qkey, IsNeverZeroNorAControlledOne) {
  EXPECT_EQ(qkey_from_random(0), 1u);
  EXPECT_EQ(qkey_from_random(0x80000000u), 1u);
  EXPECT_EQ(qkey_from_random(0xffffffffu), 0x7fffffffu);
  EXPECT_EQ(qkey_from_random(0x11111111u), 0x11111111u);
}

TEST(Exposure, OnlyTestsThatReachIntoTheBufferTellItsAddressAndKey) {
  // The operations whose target buffer a peer may reach, from kinds.h's table.
  for (const auto& op : proto::kOps) {
    const bool one_sided = op.op != proto::Op::kSend;
    EXPECT_EQ(exposes_region(op.remote_access), one_sided) << op.name;
  }
  proto::QpInfo q;
  q.qpn = 0x11;
  q.qkey = 7;
  const proto::QpInfo send =
      advertise(q, proto::info(proto::Op::kSend).remote_access, 0x7f00deadb000ull, 0x1234);
  EXPECT_EQ(send.addr, 0u);
  EXPECT_EQ(send.rkey, 0u);
  EXPECT_EQ(send.qpn, 0x11u);
  EXPECT_EQ(send.qkey, 7u);
  for (proto::Op op : {proto::Op::kWrite, proto::Op::kWriteImm, proto::Op::kRead,
                       proto::Op::kAtomicFadd, proto::Op::kAtomicCswap}) {
    const proto::QpInfo shown = advertise(q, proto::info(op).remote_access, 0x5000, 0x1234);
    EXPECT_EQ(shown.addr, 0x5000u) << name_of(op);
    EXPECT_EQ(shown.rkey, 0x1234u) << name_of(op);
  }
}

}  // namespace
}  // namespace rdmacheck::conn
