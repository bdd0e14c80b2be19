#include "host/firewall.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

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

// Text the kernel would never hold (the fuzzer found one: fuzz/corpus/
// firewall/jump-fan): a chain that jumps to itself four times (4^16 paths
// to the depth limit), and twelve chains each jumping four times into the
// next (4^12 paths). Walked naively either takes hours; the walk skips the
// loop, looks at a bounded number of rules, and names the DROP it meets
// once.
TEST(Firewall, LoopsAndFansOfJumpsAreWalkedInBoundedTime) {
  std::string text = "-P INPUT ACCEPT\n-N L\n-A INPUT -p udp --dport 4791 -j L\n";
  // Four rules that each let every RoCE packet through to the jump.
  const char* every[] = {"", "-p udp ", "-p udp --dport 4791 ", "-p udp --dport 4000:5000 "};
  for (const char* m : every) text += std::string("-A L ") + m + "-j L\n";
  for (int i = 0; i < 12; ++i) text += "-N C" + std::to_string(i) + "\n";
  for (int i = 0; i < 12; ++i) {
    const std::string from = i == 0 ? "INPUT" : "C" + std::to_string(i - 1);
    for (const char* m : every) text += "-A " + from + " " + m + "-j C" + std::to_string(i) + "\n";
  }
  text += "-A C11 -p udp --dport 4791 -j DROP\n";
  const auto rules = roce_blocking_iptables_rules(text);
  // Once, though millions of paths lead to it.
  EXPECT_EQ(rules, std::vector<std::string>{"-A C11 -p udp --dport 4791 -j DROP"});
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

// Found by fuzz/firewall_fuzz.cc: members of another type than
// libnftables-json(5) documents (a null match, a string chain, a number
// where an object goes) threw nlohmann's type_error out of the doctor. They
// read as absent now; the well-formed drop rule beside them is still found.
TEST(Firewall, NftJsonOfAnotherShapeIsReadNotThrown) {
  const std::string doc = R"({"nftables": [
    {"chain": "input"},
    {"chain": {"family": "inet", "table": "filter", "name": "input", "type": "filter",
               "hook": "input", "policy": 7}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input",
              "expr": [{"match": null}, {"jump": 3}, {"xt": "x"}, 5]}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input",
              "expr": [{"match": {"op": 1, "left": {"payload": 2}, "right": {"prefix": 9}}}]}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input",
              "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "udp",
                        "field": "dport"}}, "right": 4791}}, {"drop": null}]}}]})";
  std::vector<BlockingRule> rules;
  ASSERT_NO_THROW(rules = roce_blocking_nft_json(doc, {}));
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].text, "udp dport 4791 drop");
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
  EXPECT_FALSE(r.timed_out);
}

// A tool killed at the deadline says nothing about permissions: the note and
// the report say it was slow, so doctor does not tell root to become root.
TEST(Firewall, AToolKilledAtTheDeadlineIsSlowNotUnprivileged) {
  const auto r = evaluate_firewall({{"nft -j list ruleset", true, -1, "", true},
                                    {"iptables-save", true, -1, "", true},
                                    {"ip6tables-save", false, -1, ""}});
  EXPECT_FALSE(r.readable);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.note,
            "nft -j list ruleset did not finish in time; iptables-save did not finish in time; "
            "ip6tables-save not installed");
}

// The deadline is the group's: a tool still running at it is killed and
// marked, one that finished keeps its output.
TEST(Firewall, RunToolsKillsWhatOutlivesTheSharedDeadline) {
  const auto runs =
      run_tools({{"sh", "-c", "echo quick"}, {"sleep", "30"}}, std::chrono::milliseconds(300));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].started);
  EXPECT_EQ(runs[0].exit_status, 0);
  EXPECT_EQ(runs[0].out, "quick\n");
  EXPECT_FALSE(runs[0].timed_out);
  EXPECT_TRUE(runs[1].started);
  EXPECT_TRUE(runs[1].timed_out);
  EXPECT_EQ(runs[1].exit_status, -1);
}

// /etc/sysconfig/iptables as RHEL/CentOS 7's iptables-services package ships
// it (iptables-save format): no explicit UDP 4791 rule, a final REJECT.
constexpr const char* kRhelDefault = R"(*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -m state --state RELATED,ESTABLISHED -j ACCEPT
-A INPUT -p icmp -j ACCEPT
-A INPUT -i lo -j ACCEPT
-A INPUT -p tcp -m state --state NEW -m tcp --dport 22 -j ACCEPT
-A INPUT -j REJECT --reject-with icmp-host-prohibited
-A FORWARD -j REJECT --reject-with icmp-host-prohibited
COMMIT
)";

TEST(Firewall, AFinalRejectBlocksAndEstablishedDoesNotLetRoceThrough) {
  const auto b = roce_blocking_iptables(kRhelDefault);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].text, "-A INPUT -j REJECT --reject-with icmp-host-prohibited");
  EXPECT_EQ(b[0].only, "");
  EXPECT_EQ(render(b[0]), "iptables -A INPUT -j REJECT --reject-with icmp-host-prohibited");
}

TEST(Firewall, AnExplicitAcceptBeforeTheRejectLetsRoceThrough) {
  std::string text = kRhelDefault;
  const std::string reject = "-A INPUT -j REJECT";
  text.insert(text.find(reject), "-A INPUT -p udp -m udp --dport 4791 -j ACCEPT\n");
  EXPECT_TRUE(roce_blocking_iptables(text).empty());
}

// ufw's layout (iptables-save of ufw 0.36 after `ufw default deny incoming`,
// trimmed to the chains a RoCE packet walks): policy DROP, jumps into user chains.
constexpr const char* kUfw = R"(*filter
:INPUT DROP [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:ufw-before-input - [0:0]
:ufw-user-input - [0:0]
-A INPUT -j ufw-before-input
-A ufw-before-input -i lo -j ACCEPT
-A ufw-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A ufw-before-input -p udp -m udp --sport 67 --dport 68 -j ACCEPT
-A ufw-before-input -j ufw-user-input
-A ufw-user-input -p tcp -m tcp --dport 22 -j ACCEPT
COMMIT
)";

TEST(Firewall, APolicyDropIsADefaultDeny) {
  const auto b = roce_blocking_iptables(kUfw);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].text, "-P INPUT DROP");
  EXPECT_EQ(b[0].only, "");
  std::string open = kUfw;
  open.insert(open.find("COMMIT"), "-A ufw-user-input -p udp -m udp --dport 4791 -j ACCEPT\n");
  EXPECT_TRUE(roce_blocking_iptables(open).empty());
}

TEST(Firewall, RulesThatMatchOnlySomePacketsSaySo) {
  const auto b = roce_blocking_iptables(
      "-P INPUT ACCEPT\n"
      "-A INPUT -p udp -m udp --dport 4791 -m length --length 1100:65535 -j DROP\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].only, "by --length 1100:65535");
  EXPECT_TRUE(matches_only_some(render(b[0])));
  // Accepted from one subnet, dropped by the policy otherwise.
  const auto s = roce_blocking_iptables(
      "-P INPUT DROP\n-A INPUT -s 10.0.0.0/8 -p udp -m udp --dport 4791 -j ACCEPT\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].text, "-P INPUT DROP");
  EXPECT_EQ(s[0].only,
            "not those accepted earlier by: -A INPUT -s 10.0.0.0/8 -p udp -m udp --dport 4791 -j "
            "ACCEPT");
}

TEST(Firewall, NewCapturesPreferNftJson) {
  const std::string json = R"({"nftables": [
    {"table": {"family": "inet", "name": "filter", "handle": 1}},
    {"chain": {"family": "inet", "table": "filter", "name": "input", "handle": 1,
               "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}},
    {"rule": {"family": "inet", "table": "filter", "chain": "input", "handle": 2,
              "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}},
                                  "right": 4792}}, {"accept": null}]}}]})";
  const auto r = evaluate_firewall({{"nft -j list ruleset", true, 0, json},
                                    {"iptables-legacy-save", false, -1, ""},
                                    {"iptables-save", true, 0, kRhelDefault}});
  EXPECT_TRUE(r.readable);
  EXPECT_EQ(r.source, "nft -j list ruleset");
  ASSERT_EQ(r.rules.size(), 1u);
  EXPECT_EQ(r.rules[0], "nft inet filter input: table inet filter chain input policy drop");
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(RDMACHECK_FIXTURES "/firewall/") + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lab guest's default deny (see tests/fixtures/README.md): a policy drop,
// a length-matching drop, an accept for one subnet, and an iptables-nft rule.
TEST(Firewall, TheLabsDefaultDenyAsNftJsonShowsIt) {
  const auto b = roce_blocking_nft_json(fixture("rxe-lab-default-deny.nft.json"));
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].chain, "inet filter input");
  EXPECT_EQ(b[0].text, "udp dport 4791 meta length 1100-65535 drop");
  EXPECT_EQ(b[0].only, "by meta length 1100-65535");
  EXPECT_EQ(b[1].text, "table inet filter chain input policy drop");
  EXPECT_EQ(b[1].only,
            "not those accepted earlier by: ip saddr 198.18.0.0/24 udp dport 4791 accept");
  EXPECT_EQ(b[2].chain, "ip filter INPUT");
  // iptables-nft's -m length shows in nft's JSON only as an xt match.
  EXPECT_EQ(b[2].text, "meta l4proto udp xt match length udp dport 4791 drop");
  EXPECT_EQ(b[2].only, "by xt match length");
  // "ct state established,related accept" did not count as letting RoCE in.
}

TEST(Firewall, TheSameGuestsIptablesSaveSeesOnlyItsOwnTable) {
  const auto b = roce_blocking_iptables(fixture("rxe-lab-default-deny.iptables-save.txt"));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].only, "by --length 2000:65535");
  EXPECT_EQ(render(b[0]),
            "iptables -A INPUT -p udp -m length --length 2000:65535 -m udp --dport 4791 -j DROP "
            "[matches only some packets: by --length 2000:65535]");
}

// The same capture as the doctor reads it: iptables-nft's own table comes from
// iptables-save (as the user wrote the rule), the rest from nft's JSON.
TEST(Firewall, IptablesNftTablesAreReadAsIptablesWroteThem) {
  const auto r = evaluate_firewall(
      {{"nft -j list ruleset", true, 0, fixture("rxe-lab-default-deny.nft.json")},
       {"iptables-legacy-save", false, -1, ""},
       {"ip6tables-legacy-save", false, -1, ""},
       {"iptables-save", true, 0, fixture("rxe-lab-default-deny.iptables-save.txt")},
       {"ip6tables-save", true, 0, ""}});
  EXPECT_EQ(r.source, "nft -j list ruleset, iptables-save");
  ASSERT_EQ(r.rules.size(), 3u);
  EXPECT_EQ(r.rules[0],
            "nft inet filter input: udp dport 4791 meta length 1100-65535 drop [matches only some "
            "packets: by meta length 1100-65535]");
  EXPECT_EQ(r.rules[2],
            "iptables -A INPUT -p udp -m length --length 2000:65535 -m udp --dport 4791 -j DROP "
            "[matches only some packets: by --length 2000:65535]");
}

}  // namespace
}  // namespace rdmacheck

namespace rdmacheck {
namespace {

TEST(Firewall, EveryConditionOfARuleIsKept) {
  const auto b = roce_blocking_iptables(
      "-A INPUT -s 198.18.0.2/32 -p udp -m udp --dport 4791 -m length --length 600:65535 -j "
      "DROP\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].only, "by source 198.18.0.2/32 and by --length 600:65535");
  EXPECT_FALSE(covers_path(render(b[0]), {"198.18.0.2", "198.18.0.1"}));
}

TEST(Firewall, AnAddressRuleCoversThePathItNames) {
  const auto b =
      roce_blocking_iptables("-A INPUT -s 198.18.0.2/32 -p udp -m udp --dport 4791 -j DROP\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(covers_path(render(b[0]), {"198.18.0.2", "198.18.0.1"}));
  EXPECT_FALSE(covers_path(render(b[0]), {"198.18.0.3", "198.18.0.1"}));
  EXPECT_FALSE(covers_path(render(b[0]), {}));
  EXPECT_TRUE(
      covers_path("nft inet filter input: ip saddr 198.18.0.0/24 udp dport 4791 drop "
                  "[matches only some packets: by ip saddr 198.18.0.0/24]",
                  {"198.18.0.2"}));
  EXPECT_FALSE(
      covers_path("iptables -A INPUT ! -s 198.18.0.2/32 -j DROP [matches only some "
                  "packets: by source not 198.18.0.2/32]",
                  {"198.18.0.2"}));
  EXPECT_FALSE(covers_path("iptables -A INPUT -p udp --dport 4791 -j DROP", {"198.18.0.2"}));
}

TEST(Firewall, AddressInPrefix) {
  EXPECT_TRUE(address_in_prefix("10.1.2.3", "10.0.0.0/8"));
  EXPECT_FALSE(address_in_prefix("11.1.2.3", "10.0.0.0/8"));
  EXPECT_TRUE(address_in_prefix("198.18.0.2", "198.18.0.2"));
  EXPECT_TRUE(address_in_prefix("198.18.0.2", "0.0.0.0/0"));
  EXPECT_TRUE(address_in_prefix("fd00::5", "fd00::/64"));
  EXPECT_FALSE(address_in_prefix("fd01::5", "fd00::/64"));
  EXPECT_FALSE(address_in_prefix("198.18.0.2", "fd00::/64"));
  EXPECT_FALSE(address_in_prefix("198.18.0.2", "198.18.0.0/33"));
  EXPECT_FALSE(address_in_prefix("198.18.0.2", "198.18.0.0/x"));
  EXPECT_FALSE(address_in_prefix("nonsense", "10.0.0.0/8"));
}

}  // namespace
}  // namespace rdmacheck
