// Whether this host's packet filter would drop RoCE v2 (UDP destination port
// 4791), evaluated as the kernel walks its chains for such a packet: rules in
// order, jumps into user chains, the first ACCEPT or DROP that matches every
// RoCE packet ends the walk, and a base chain's policy decides what falls off
// its end. RoCE v2 packets never belong to a conntrack flow (requests and ACKs
// both go to port 4791), so "ct state established" never matches them.
// Parsers are pure functions over the real tools' own output.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmacheck {

// A rule, or a chain's policy, that drops or rejects RoCE v2 packets.
struct BlockingRule {
  std::string tool;   // "nft", "iptables", "ip6tables"
  std::string chain;  // "inet filter input", "INPUT"
  std::string text;   // the rule as written (nft rendered from its JSON)
  std::string only;   // "" = every RoCE v2 packet; else what limits it ("by meta length")
};

struct FirewallReport {
  bool readable = false;               // false: neither nft nor iptables could be read
  std::vector<BlockingRule> blocking;  // in the order the kernel meets them
  std::vector<std::string> rules;      // render() of each, for callers that want text
  std::string source;                  // "nft -j list ruleset", "iptables-save"
  std::string note;                    // why it could not be read
  bool timed_out = false;              // a tool was killed at the deadline
};

// "iptables -A INPUT -p udp --dport 4791 -j DROP", with
// " [matches only some packets: ...]" when it does not match every RoCE packet.
std::string render(const BlockingRule& r);
// Whether a rendered rule (also as the peer sent it) matches only some RoCE packets.
bool matches_only_some(const std::string& rendered);
// Whether a rendered rule that matches only some RoCE packets is limited by
// addresses alone (iptables -s/-d, nft ip/ip6 saddr/daddr, no negation) that
// cover one of `addresses`: then it matches every RoCE packet between them.
// A rule limited by anything else (length, interface, a set) is not.
bool covers_path(const std::string& rendered, const std::vector<std::string>& addresses);
// Whether the address (IPv4 or IPv6 text) lies in the prefix ("10.0.0.0/8",
// "198.18.0.2", "fd00::/64"); false when either does not parse.
bool address_in_prefix(const std::string& address, const std::string& prefix);

// `iptables-save` / `iptables -S` (either format; the filter table), as the tool it came from.
std::vector<BlockingRule> roce_blocking_iptables(const std::string& text,
                                                 const std::string& tool = "iptables");
// `nft -j list ruleset`; skip names tables ("ip filter") to leave out.
std::vector<BlockingRule> roce_blocking_nft_json(const std::string& json,
                                                 const std::vector<std::string>& skip = {});

// Older captures: explicit drop rules in `iptables -S` and `nft list ruleset` text.
std::vector<std::string> roce_blocking_iptables_rules(const std::string& iptables_s);
std::vector<std::string> roce_blocking_nft_rules(const std::string& ruleset);

// What one packet-filter tool printed; kept raw so a capture can replay it.
struct ToolRun {
  std::string command;   // "nft -j list ruleset"
  bool started = false;  // false: not installed
  int exit_status = -1;  // -1: killed at its deadline or by a signal
  std::string out;
  bool timed_out = false;  // killed at the deadline: says nothing about permissions
};

// How long the packet-filter tools may take together. Under emulation, with
// the host loaded, one nft or iptables-save takes over a second of a single
// vCPU, and they share it; on hardware they finish in milliseconds.
inline constexpr std::chrono::milliseconds kFirewallReadTime{8000};

// Runs nft -j list ruleset, iptables-legacy-save, ip6tables-legacy-save,
// iptables-save and ip6tables-save at once, all done within `within`.
std::vector<ToolRun> collect_firewall_outputs(std::chrono::milliseconds within = kFirewallReadTime);
// Runs the command lines at once and keeps what each printed; a tool still
// running after `within` is killed and marked timed_out.
std::vector<ToolRun> run_tools(const std::vector<std::vector<std::string>>& argvs,
                               std::chrono::milliseconds within = kFirewallReadTime);
// As a capture keeps them (doctor --capture's firewall.json, routing.json).
nlohmann::json tool_runs_json(const std::vector<ToolRun>& runs);
std::vector<ToolRun> tool_runs_from_json(const nlohmann::json& j);
// The output of COMMAND when it ran and exited 0; nullptr otherwise.
const ToolRun* successful_run(const std::vector<ToolRun>& runs, const std::string& command);
// Pure: the report those outputs give. nft's JSON is preferred (iptables-nft
// rules are in it); legacy iptables tables are added; without nft, the
// iptables text; old captures (iptables -S, nft list ruleset) still replay.
FirewallReport evaluate_firewall(const std::vector<ToolRun>& runs);
// evaluate_firewall(collect_firewall_outputs()).
FirewallReport read_firewall(std::chrono::milliseconds within = kFirewallReadTime);

}  // namespace rdmacheck
