// Whether this host's packet filter would drop RoCE v2 (UDP port 4791).
// Parsers are pure functions over the real tools' own output.
#pragma once

#include <string>
#include <vector>

namespace rdmacheck {

struct FirewallReport {
  bool readable = false;           // false: neither iptables nor nft could be read
  std::vector<std::string> rules;  // rules that drop or reject UDP 4791, as the tool printed them
  std::string source;              // "iptables -S", "nft list ruleset"
  std::string note;                // why it could not be read
};

// Lines of `iptables -S` / `ip6tables -S` that DROP or REJECT UDP 4791 in INPUT or OUTPUT.
std::vector<std::string> roce_blocking_iptables_rules(const std::string& iptables_s);
// Rules of `nft list ruleset` in input/output hooks that drop or reject UDP 4791.
std::vector<std::string> roce_blocking_nft_rules(const std::string& ruleset);

// What one packet-filter tool printed; kept raw so a capture can replay it.
struct ToolRun {
  std::string command;   // "iptables -S"
  bool started = false;  // false: not installed
  int exit_status = -1;  // -1: killed at its deadline or by a signal
  std::string out;
};

// Runs iptables -S, ip6tables -S and nft list ruleset, each bounded in time.
std::vector<ToolRun> collect_firewall_outputs();
// Pure: the report those outputs give (iptables rules first, nft when they name none).
FirewallReport evaluate_firewall(const std::vector<ToolRun>& runs);
// evaluate_firewall(collect_firewall_outputs()).
FirewallReport read_firewall();

}  // namespace rdmacheck
