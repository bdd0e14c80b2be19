// iptables-save / iptables -S text into the chain model (firewall_model.h).
#include <fmt/core.h>

#include <sstream>

#include "host/firewall_model.h"

namespace rdmacheck::fw {
namespace {

// Words of a rule line, quoted strings kept whole ("--comment "a b"").
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> w;
  std::string cur;
  bool quoted = false;
  bool any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
      continue;
    }
    if (!quoted && (c == ' ' || c == '\t')) {
      if (any) w.push_back(cur);
      cur.clear();
      any = false;
      continue;
    }
    cur += c;
    any = true;
  }
  if (any) w.push_back(cur);
  return w;
}

bool has_new(const std::string& states) {
  std::istringstream in(states);
  for (std::string s; std::getline(in, s, ',');) {
    if (s == "NEW" || s == "new" || s == "UNTRACKED") return true;
  }
  return false;
}

Rule iptables_rule(const std::vector<std::string>& w, const std::string& line) {
  Rule r;
  r.text = line;
  for (size_t i = 2; i < w.size(); ++i) {
    const bool neg = w[i] == "!";
    if (neg && i + 1 < w.size()) ++i;
    const std::string& opt = w[i];
    const std::string val = i + 1 < w.size() ? w[i + 1] : "";
    auto is = [&](bool yes) { return (yes != neg) ? Match::kAll : Match::kNo; };
    if (opt == "-j" || opt == "--jump" || opt == "-g" || opt == "--goto") {
      if (val == "ACCEPT") {
        r.verdict = Verdict::kAccept;
      } else if (val == "DROP" || val == "REJECT") {
        r.verdict = Verdict::kDrop;
      } else if (val == "RETURN") {
        r.verdict = Verdict::kReturn;
      } else {
        r.verdict = Verdict::kJump;  // a user chain; LOG, MARK, ... name none and decide nothing
        r.target = val;
      }
      ++i;
    } else if (opt == "-p" || opt == "--protocol") {
      narrow(r, is(val == "udp" || val == "17" || val == "all"), "");
      ++i;
    } else if (opt == "--dport" || opt == "--dports" || opt == "--destination-port" ||
               opt == "--destination-ports") {
      narrow(r, is(port_spec_matches(val)), "");
      ++i;
    } else if (opt == "--state" || opt == "--ctstate") {
      narrow(r, is(has_new(val)), "");
      ++i;
    } else if ((opt == "-i" || opt == "--in-interface" || opt == "-o" ||
                opt == "--out-interface") &&
               val == "lo" && !neg) {
      narrow(r, Match::kNo, "");
      ++i;
    } else if (opt == "-s" || opt == "-d" || opt == "--source" || opt == "--destination") {
      const bool any = val == "0.0.0.0/0" || val == "::/0";
      narrow(r, any ? (neg ? Match::kNo : Match::kAll) : Match::kSome,
             fmt::format("by {} {}{}", opt.size() == 2 && opt[1] == 's' ? "source" : "destination",
                         neg ? "not " : "", val));
      ++i;
    } else if (opt == "-m" || opt == "--match" || opt == "--comment" || opt == "--log-prefix" ||
               opt == "--reject-with" || opt == "--log-level") {
      ++i;  // the module's options follow; comments and targets' options do not match
    } else if (opt == "-A" || opt == "-I") {
      ++i;
    } else if (!opt.empty() && opt[0] == '-') {
      // Any other condition (--length, -i eth1, --sport, --limit, --match-set, ...).
      std::string v = val.empty() || val[0] == '-' ? "" : " " + val;
      narrow(r, Match::kSome, fmt::format("by {}{}{}", neg ? "not " : "", opt, v));
      if (!v.empty()) ++i;
    }
  }
  return r;
}

}  // namespace

Ruleset parse_iptables(const std::string& text, const std::string& tool) {
  Ruleset rs;
  rs.tool = tool;
  std::istringstream in(text);
  bool filter = true;  // iptables -S prints the filter table without a header
  auto chain = [&](const std::string& name) -> Chain& {
    Chain& c = rs.chains[name];
    c.name = name;
    c.label = name;
    return c;
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind('*', 0) == 0) {
      filter = line == "*filter";
      continue;
    }
    if (!filter) continue;
    const auto w = words(line);
    if (w.empty()) continue;
    if ((w[0] == "-P" && w.size() >= 3) || (w[0].rfind(':', 0) == 0 && w.size() >= 2)) {
      const std::string name = w[0] == "-P" ? w[1] : w[0].substr(1);
      const std::string policy = w[0] == "-P" ? w[2] : w[1];
      if (name == "INPUT" || name == "OUTPUT") {
        Chain& c = chain(name);
        c.base = true;
        c.policy_drop = policy == "DROP";
        c.policy_text = w[0] == "-P" ? line : fmt::format("-P {} {}", name, policy);
      }
      continue;
    }
    if (w[0] == "-A" && w.size() >= 2) chain(w[1]).rules.push_back(iptables_rule(w, line));
  }
  for (const char* b : {"INPUT", "OUTPUT"}) {
    auto it = rs.chains.find(b);
    if (it != rs.chains.end()) {
      it->second.base = true;
      rs.base.push_back(b);
    }
  }
  return rs;
}

}  // namespace rdmacheck::fw
