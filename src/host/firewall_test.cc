#include "host/firewall.h"

#include <gtest/gtest.h>

namespace rdmacheck {
namespace {

// `iptables -S` as printed by iptables-nft 1.8.9 (Debian 12) in a lab guest
// after `iptables -I INPUT -p udp --dport 4791 -j DROP`.
constexpr const char* kLabFirewall = R"(-P INPUT ACCEPT
-P FORWARD ACCEPT
-P OUTPUT ACCEPT
-A INPUT -p udp -m udp --dport 4791 -j DROP
)";

TEST(Firewall, FindsTheClassicRule) {
  const auto rules = roce_blocking_iptables_rules(kLabFirewall);
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0], "-A INPUT -p udp -m udp --dport 4791 -j DROP");
}

TEST(Firewall, IgnoresAcceptsOtherPortsAndForward) {
  EXPECT_TRUE(roce_blocking_iptables_rules("-A INPUT -p udp -m udp --dport 4791 -j ACCEPT\n"
                                           "-A INPUT -p tcp -m tcp --dport 4791 -j DROP\n"
                                           "-A INPUT -p udp -m udp --dport 53 -j DROP\n"
                                           "-A FORWARD -p udp -m udp --dport 4791 -j DROP\n")
                  .empty());
}

TEST(Firewall, RangesMultiportAndAllUdp) {
  EXPECT_EQ(roce_blocking_iptables_rules("-A INPUT -p udp -m udp --dport 4000:5000 -j REJECT "
                                         "--reject-with icmp-port-unreachable\n")
                .size(),
            1u);
  EXPECT_EQ(roce_blocking_iptables_rules("-A OUTPUT -p udp -m multiport --dports 53,4791 -j DROP\n")
                .size(),
            1u);
  EXPECT_EQ(roce_blocking_iptables_rules("-A INPUT -p udp -j DROP\n").size(), 1u);
  EXPECT_EQ(roce_blocking_iptables_rules("-A INPUT -j DROP\n").size(), 1u);
  // Negated matches are beyond a line-wise reading and are not claimed.
  EXPECT_TRUE(roce_blocking_iptables_rules("-A INPUT -p udp ! --dport 4791 -j DROP\n").empty());
}

// `nft list ruleset` layout of nftables 1.0.6 (Debian 12).
constexpr const char* kNftRuleset = R"(table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		udp dport 4791 drop
		tcp dport 22 accept
	}
	chain forward {
		type filter hook forward priority filter; policy accept;
		udp dport 4791 drop
	}
	chain output {
		type filter hook output priority filter; policy accept;
		udp dport { 53, 4700-4800 } counter packets 0 bytes 0 reject
	}
}
)";

TEST(Firewall, NftRules) {
  const auto rules = roce_blocking_nft_rules(kNftRuleset);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0], "udp dport 4791 drop");
  EXPECT_EQ(rules[1], "udp dport { 53, 4700-4800 } counter packets 0 bytes 0 reject");
}

TEST(Firewall, EvaluatesIptablesOutputsFirst) {
  const std::vector<ToolRun> runs = {
      {"iptables -S", true, 0, "-P INPUT ACCEPT\n-A INPUT -p udp -m udp --dport 4791 -j DROP\n"},
      {"ip6tables -S", true, 0, "-P INPUT ACCEPT\n"},
      {"nft list ruleset", true, 0, kNftRuleset}};
  const auto r = evaluate_firewall(runs);
  EXPECT_TRUE(r.readable);
  ASSERT_EQ(r.rules.size(), 1u);
  EXPECT_EQ(r.rules[0], "iptables -A INPUT -p udp -m udp --dport 4791 -j DROP");
}

TEST(Firewall, FallsBackToNftAndSaysWhyWhenNothingIsReadable) {
  auto r = evaluate_firewall({{"iptables -S", false, -1, ""},
                              {"ip6tables -S", false, -1, ""},
                              {"nft list ruleset", true, 0, kNftRuleset}});
  EXPECT_TRUE(r.readable);
  EXPECT_EQ(r.rules.size(), 2u);
  EXPECT_EQ(r.source, "nft list ruleset");
  r = evaluate_firewall({{"iptables -S", true, 4, ""},
                         {"ip6tables -S", false, -1, ""},
                         {"nft list ruleset", false, -1, ""}});
  EXPECT_FALSE(r.readable);
  EXPECT_EQ(r.note,
            "iptables -S failed (root needed?); ip6tables not installed; nft not installed");
}

}  // namespace
}  // namespace rdmacheck
