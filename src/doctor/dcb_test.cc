#include "doctor/dcb.h"

#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <vector>

namespace rdmacheck::doctor {
namespace {

// A DCB_CMD_IEEE_GET reply laid out as net/dcb/dcbnl.c dcbnl_ieee_fill() builds it.
std::vector<char> ieee_reply(uint8_t pfc_en, int dscp_entries) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_GETDCB;
  auto* dcb = static_cast<dcbmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(dcbmsg)));
  dcb->cmd = DCB_CMD_IEEE_GET;
  mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "ens1f0np0");
  nlattr* ieee = mnl_attr_nest_start(nlh, DCB_ATTR_IEEE);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  pfc.requests[3] = 1532;
  pfc.indications[3] = 877;
  mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof pfc, &pfc);
  nlattr* table = mnl_attr_nest_start(nlh, DCB_ATTR_IEEE_APP_TABLE);
  for (int i = 0; i < dscp_entries; ++i) {
    dcb_app app{IEEE_8021QAZ_APP_SEL_DSCP, 3, static_cast<uint16_t>(24 + i)};
    mnl_attr_put(nlh, DCB_ATTR_IEEE_APP, sizeof app, &app);
  }
  dcb_app ethertype{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8915};  // RoCE v1 ethertype: not DSCP
  mnl_attr_put(nlh, DCB_ATTR_IEEE_APP, sizeof ethertype, &ethertype);
  mnl_attr_nest_end(nlh, table);
  mnl_attr_nest_end(nlh, ieee);
  mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  buf.resize(nlh->nlmsg_len);
  return buf;
}

TEST(Dcb, ParsesPfcAndTrust) {
  const auto buf = ieee_reply(0x08, 2);
  const auto d = parse_dcb_reply(reinterpret_cast<const nlmsghdr*>(buf.data()));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_TRUE(d->pfc_present);
  EXPECT_EQ(d->pfc_cap, 8);
  EXPECT_EQ(d->pfc_priorities(), std::vector<int>{3});
  EXPECT_EQ(d->pfc_requests[3], 1532u);
  EXPECT_EQ(d->pfc_indications[3], 877u);
  EXPECT_EQ(d->dscp_app_entries, 2);
  EXPECT_EQ(d->trust(), "dscp");
  // Each DSCP APP entry's protocol is the DSCP, its priority where it goes.
  EXPECT_EQ(d->dscp_priority, (std::map<int, int>{{24, 3}, {25, 3}}));
  const auto pcp = parse_dcb_reply(reinterpret_cast<const nlmsghdr*>(ieee_reply(0, 0).data()));
  ASSERT_TRUE(pcp.ok());
  EXPECT_TRUE(pcp->pfc_priorities().empty());
  EXPECT_EQ(pcp->trust(), "pcp");
}

TEST(Dcb, ReplyWithoutIeeeIsAnError) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  mnl_nlmsg_put_extra_header(nlh, sizeof(dcbmsg));
  mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth0");
  EXPECT_FALSE(parse_dcb_reply(nlh).ok());
}

TEST(Dcb, JsonRoundTrip) {
  DcbState d;
  d.pfc_present = true;
  d.pfc_enabled = 0x88;
  d.pfc_requests[7] = 5;
  d.dscp_app_entries = 1;
  d.dscp_priority = {{26, 3}};
  const auto back = dcb_from_json(to_json(d));
  EXPECT_EQ(back.dscp_priority, d.dscp_priority);
  EXPECT_EQ(back.pfc_priorities(), (std::vector<int>{3, 7}));
  EXPECT_EQ(back.pfc_requests[7], 5u);
  EXPECT_EQ(back.trust(), "dscp");
}

// The real request over rtnetlink: loopback has no DCB, which the kernel
// answers with EOPNOTSUPP (net/dcb/dcbnl.c: no dcbnl_ops).
TEST(Dcb, LoopbackHasNoDcb) {
  const auto r = read_dcb("lo");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().errnum, EOPNOTSUPP) << r.error().message();
  EXPECT_EQ(read_dcb("no-such-netdev0").error().errnum, ENODEV);
}

}  // namespace
}  // namespace rdmacheck::doctor
