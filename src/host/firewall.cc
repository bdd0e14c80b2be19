#include "host/firewall.h"

#include <sstream>

#include "base/subprocess.h"

namespace rdmacheck {
namespace {

constexpr int kRocePort = 4791;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// "4791", "4000:5000", "80,4791" (multiport --dports)
bool port_spec_matches(const std::string& spec) {
  std::istringstream in(spec);
  for (std::string part; std::getline(in, part, ',');) {
    const auto colon = part.find(':');
    try {
      if (colon == std::string::npos) {
        if (std::stoi(part) == kRocePort) return true;
      } else {
        const int lo = colon == 0 ? 0 : std::stoi(part.substr(0, colon));
        const int hi = colon + 1 >= part.size() ? 65535 : std::stoi(part.substr(colon + 1));
        if (lo <= kRocePort && kRocePort <= hi) return true;
      }
    } catch (const std::exception&) {
      // a named service or something unparsable: not ours
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> roce_blocking_iptables_rules(const std::string& iptables_s) {
  std::vector<std::string> out;
  std::istringstream in(iptables_s);
  for (std::string line; std::getline(in, line);) {
    const auto w = words(line);
    if (w.size() < 3 || w[0] != "-A" || (w[1] != "INPUT" && w[1] != "OUTPUT")) continue;
    std::string proto;
    std::string target;
    bool port_given = false;
    bool port_match = false;
    bool negated = false;
    for (size_t i = 2; i + 1 < w.size(); ++i) {
      if (w[i] == "!") negated = true;
      if (w[i] == "-p") proto = w[i + 1];
      if (w[i] == "-j") target = w[i + 1];
      if (w[i] == "--dport" || w[i] == "--dports" || w[i] == "--destination-port") {
        port_given = true;
        port_match = port_spec_matches(w[i + 1]);
      }
    }
    if (negated) continue;  // rules with negations are beyond a line-wise reading
    if (target != "DROP" && target != "REJECT") continue;
    if (!proto.empty() && proto != "udp" && proto != "all") continue;
    // A rule for all UDP (or all traffic) blocks RoCE too.
    if (port_given && !port_match) continue;
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> roce_blocking_nft_rules(const std::string& ruleset) {
  std::vector<std::string> out;
  std::istringstream in(ruleset);
  bool in_filter_chain = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("hook input") != std::string::npos ||
        line.find("hook output") != std::string::npos) {
      in_filter_chain = true;
      continue;
    }
    if (line.find("chain ") != std::string::npos) in_filter_chain = false;
    if (!in_filter_chain) continue;
    const bool verdict =
        line.find(" drop") != std::string::npos || line.find(" reject") != std::string::npos;
    if (!verdict) continue;
    const auto dport = line.find("udp dport ");
    if (dport == std::string::npos) continue;
    std::string spec = words(line.substr(dport + 10)).front();
    if (spec == "{") {
      const auto close = line.find('}', dport);
      spec = line.substr(line.find('{', dport) + 1, close - line.find('{', dport) - 1);
      std::string cleaned;
      for (char c : spec) cleaned += (c == ' ') ? '\0' : (c == '-' ? ':' : c);
      spec.clear();
      for (char c : cleaned) {
        if (c != '\0') spec += c;
      }
    } else {
      for (char& c : spec) {
        if (c == '-') c = ':';
      }
    }
    if (port_spec_matches(spec)) {
      std::string t = line;
      t.erase(0, t.find_first_not_of(" \t"));
      out.push_back(t);
    }
  }
  return out;
}

std::vector<ToolRun> collect_firewall_outputs() {
  using namespace std::chrono_literals;
  const std::vector<std::vector<std::string>> argvs = {
      {"iptables", "-S"}, {"ip6tables", "-S"}, {"nft", "list", "ruleset"}};
  std::vector<ToolRun> runs;
  for (const auto& argv : argvs) {
    ToolRun t;
    for (const auto& a : argv) t.command += (t.command.empty() ? "" : " ") + a;
    if (auto res = run_capture(argv, 3s)) {
      t.started = true;
      t.exit_status = res->exit_status;
      t.out = std::move(res->out);
    }
    runs.push_back(std::move(t));
  }
  return runs;
}

FirewallReport evaluate_firewall(const std::vector<ToolRun>& runs) {
  FirewallReport r;
  std::vector<std::string> notes;
  const auto note = [&](const ToolRun& t) {
    notes.push_back(t.started ? t.command + " failed (root needed?)"
                              : t.command.substr(0, t.command.find(' ')) + " not installed");
  };
  for (const auto& t : runs) {
    if (t.command != "iptables -S" && t.command != "ip6tables -S") continue;
    if (t.started && t.exit_status == 0) {
      r.readable = true;
      r.source = "iptables -S";
      const std::string tool = t.command.substr(0, t.command.find(' '));
      for (auto& rule : roce_blocking_iptables_rules(t.out)) r.rules.push_back(tool + " " + rule);
    } else {
      note(t);
    }
  }
  if (r.rules.empty()) {
    for (const auto& t : runs) {
      if (t.command != "nft list ruleset") continue;
      if (t.started && t.exit_status == 0) {
        r.readable = true;
        r.source = r.source.empty() ? "nft list ruleset" : r.source + ", nft list ruleset";
        r.rules = roce_blocking_nft_rules(t.out);
      } else {
        note(t);
      }
    }
  }
  if (!r.readable) {
    for (const auto& n : notes) r.note += (r.note.empty() ? "" : "; ") + n;
  }
  return r;
}

FirewallReport read_firewall() { return evaluate_firewall(collect_firewall_outputs()); }

}  // namespace rdmacheck
