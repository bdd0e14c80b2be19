// The neighbour messages are built here as the kernel sends them
// (rtnetlink(7): nlmsghdr, struct ndmsg, then NDA_DST and NDA_LLADDR
// attributes), with libmnl. The IPoIB hardware address follows its
// documented layout (RFC 4391 9.1.1; RHEL 8 "Configuring InfiniBand and
// RDMA networks", 5.2 "Understanding IPoIB hardware addresses": flags and
// QPN in 4 bytes, then subnet prefix and port GUID). Its values are
// invented: QPN 0x000048, the default subnet prefix fe80::, and a port GUID
// of Mellanox's OUI (00:02:c9). No InfiniBand host was at hand to capture.
#include "net/neighbour.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace rdmacheck {
namespace {

const std::vector<uint8_t> kIpoib = {0x80, 0x00, 0x00, 0x48, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x0d, 0x5f, 0x81};

// One RTM_NEWNEIGH message of FAMILY for DST in BUF.
const nlmsghdr* neigh_message(std::vector<char>& buf, uint8_t family,
                              const std::vector<uint8_t>& dst, const std::vector<uint8_t>& lladdr,
                              uint16_t state = NUD_REACHABLE) {
  buf.assign(MNL_SOCKET_BUFFER_SIZE, 0);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = RTM_NEWNEIGH;
  auto* nd = static_cast<ndmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(ndmsg)));
  nd->ndm_family = family;
  nd->ndm_ifindex = 4;
  nd->ndm_state = state;
  if (!dst.empty()) mnl_attr_put(nlh, NDA_DST, dst.size(), dst.data());
  if (!lladdr.empty()) mnl_attr_put(nlh, NDA_LLADDR, lladdr.size(), lladdr.data());
  return nlh;
}

TEST(Neighbour, AnIpv4EntryOnIpoibCarriesThePortGid) {
  std::vector<char> buf;
  const auto n = parse_neigh_message(neigh_message(buf, AF_INET, {192, 168, 10, 2}, kIpoib));
  ASSERT_TRUE(n);
  EXPECT_EQ(ip_text(n->ip), "192.168.10.2");
  EXPECT_EQ(n->ifindex, 4);
  EXPECT_EQ(ipoib_gid(n->lladdr), "fe80:0000:0000:0000:0002:c903:000d:5f81");
}

TEST(Neighbour, AnIpv6EntryAndAnEthernetOne) {
  std::vector<char> buf;
  std::vector<uint8_t> v6(16, 0);
  v6[0] = 0xfd;
  v6[15] = 0x02;
  const auto ib6 = parse_neigh_message(neigh_message(buf, AF_INET6, v6, kIpoib, NUD_STALE));
  ASSERT_TRUE(ib6);
  EXPECT_EQ(ip_text(ib6->ip), "fd00::2");
  EXPECT_TRUE(ipoib_gid(ib6->lladdr));  // stale still holds a valid address (ip-neighbour(8))
  const auto eth = parse_neigh_message(
      neigh_message(buf, AF_INET, {198, 18, 0, 2}, {0x52, 0x54, 0x00, 0x12, 0x34, 0x02}));
  ASSERT_TRUE(eth);
  EXPECT_EQ(eth->lladdr.size(), 6u);
  EXPECT_FALSE(ipoib_gid(eth->lladdr)) << "six bytes are Ethernet, not IPoIB";
}

TEST(Neighbour, AnUnresolvedEntryHasNoAddressAndAMessageWithoutDestinationIsNone) {
  std::vector<char> buf;
  for (const uint16_t state :
       {uint16_t{NUD_INCOMPLETE}, uint16_t{NUD_FAILED}, uint16_t{NUD_NONE}}) {
    const auto n =
        parse_neigh_message(neigh_message(buf, AF_INET, {192, 168, 10, 2}, kIpoib, state));
    ASSERT_TRUE(n);
    EXPECT_TRUE(n->lladdr.empty()) << state;
  }
  EXPECT_FALSE(parse_neigh_message(neigh_message(buf, AF_INET, {}, kIpoib)));
  EXPECT_FALSE(parse_neigh_message(neigh_message(buf, AF_INET, {1, 2, 3}, kIpoib)))
      << "a 3-byte IPv4 destination";
}

// The live table, through the kernel's rtnetlink, against what iproute2
// prints of it (`ip -j neigh show`, the model tool): every entry it shows
// with an address is found with the same address, and an address it does
// not show is not found.
TEST(Neighbour, ThisHostsTableReadsAsIproute2ShowsIt) {
  FILE* p = ::popen("ip -j neigh show 2>/dev/null", "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  std::array<char, 4096> chunk{};
  for (size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), p)) > 0;)
    text.append(chunk.data(), n);
  ASSERT_EQ(::pclose(p), 0) << "ip -j neigh show failed (iproute2 is a dependency)";
  const auto shown = nlohmann::json::parse(text, nullptr, false);
  ASSERT_TRUE(shown.is_array()) << text;
  std::set<std::string> listed;
  for (const auto& e : shown) {
    const std::string dst = e.value("dst", "");
    listed.insert(dst);
    if (!e.contains("lladdr")) continue;
    const auto ip = parse_ip(dst);
    ASSERT_TRUE(ip) << dst;
    const auto n = neighbour_of(*ip);
    ASSERT_TRUE(n.ok()) << n.error().message();
    ASSERT_TRUE(n->has_value()) << dst << " is in ip's table";
    std::string hw;
    for (const uint8_t b : (*n)->lladdr) hw += fmt::format("{}{:02x}", hw.empty() ? "" : ":", b);
    EXPECT_EQ(hw, e["lladdr"].get<std::string>()) << dst;
  }
  for (const char* absent : {"203.0.113.77", "2001:db8::77"}) {  // documentation addresses
    if (listed.count(absent) != 0) continue;
    const auto n = neighbour_of(*parse_ip(absent));
    ASSERT_TRUE(n.ok()) << n.error().message();
    EXPECT_FALSE(n->has_value()) << absent;
  }
}

}  // namespace
}  // namespace rdmacheck
