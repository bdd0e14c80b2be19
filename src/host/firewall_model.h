// The chain model that both firewall parsers fill and one walk evaluates, as
// the kernel walks a RoCE v2 packet (UDP dport 4791) through a filter table.
// Internal to host/firewall*.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "host/firewall.h"

namespace rdmacheck::fw {

enum class Match { kNo, kSome, kAll };  // of a RoCE v2 packet
enum class Verdict { kNone, kAccept, kDrop, kJump, kReturn };

struct Rule {
  Match match = Match::kAll;
  std::string only;  // with kSome: what limits it
  Verdict verdict = Verdict::kNone;
  std::string target;  // kJump
  std::string text;
};

struct Chain {
  std::string name;
  std::string label;  // "inet filter input", "INPUT"
  bool base = false;  // hooked: its policy decides what falls off its end
  bool policy_drop = false;
  std::string policy_text;
  std::vector<Rule> rules;
};

struct Ruleset {
  std::string tool;
  std::map<std::string, Chain> chains;  // by name, within one table
  std::vector<std::string> base;        // base chains on the RoCE path, in order
};

// Joins the conditions that limit one rule: "by source 10.0.0.1 and by --length 600:65535".
inline constexpr const char* kAndCondition = " and ";

// Narrows a rule's match by one condition (why: what limits it, with kSome).
void narrow(Rule& r, Match m, const std::string& why);

// "4791", "4000:5000", "80,4791" (multiport), nft "4000-5000"
bool port_spec_matches(const std::string& spec);

// The rules and policies that drop RoCE v2 packets, in the order the kernel meets them.
std::vector<BlockingRule> evaluate(const Ruleset& rs);

// iptables-save / iptables -S text (the filter table).
Ruleset parse_iptables(const std::string& text, const std::string& tool);
// nft -j list ruleset; skip: tables ("ip filter") to leave out.
std::vector<Ruleset> parse_nft_json(const std::string& text, const std::vector<std::string>& skip);

}  // namespace rdmacheck::fw
