#include "host/firewall.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/subprocess.h"

namespace rdmacheck {
namespace {

constexpr int kRocePort = 4791;
constexpr const char* kSomeMarker = " [matches only some packets: ";

// ---------------------------------------------------------------------------
// The chain model both parsers fill and one walk evaluates.

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

// Narrows a rule's match by one condition.
void narrow(Rule& r, Match m, const std::string& why) {
  if (m == Match::kNo) r.match = Match::kNo;
  if (m == Match::kSome && r.match == Match::kAll) {
    r.match = Match::kSome;
    r.only = why;
  }
}

enum class End { kFall, kAccept, kDrop };

struct Walk {
  const Ruleset& rs;
  std::vector<BlockingRule>& out;

  // Walks CHAIN for a RoCE packet. outer: why the packets reaching it are only
  // some of them (a narrowing jump); accepted: rules that let some through first.
  End chain(const Chain& c, const std::string& outer, std::vector<std::string>& accepted,
            int depth) {
    if (depth > 16) return End::kFall;  // a loop; the kernel refuses those anyway
    for (const auto& r : c.rules) {
      if (r.match == Match::kNo) continue;
      const bool all = r.match == Match::kAll;
      const std::string why = !outer.empty() ? outer : all ? "" : r.only;
      switch (r.verdict) {
        case Verdict::kAccept:
          if (all && outer.empty()) return End::kAccept;
          accepted.push_back(r.text);
          break;
        case Verdict::kDrop:
          out.push_back(BlockingRule{rs.tool, c.label, r.text, with_exceptions(why, accepted)});
          if (all && outer.empty()) return End::kDrop;
          break;
        case Verdict::kJump: {
          auto it = rs.chains.find(r.target);
          if (it == rs.chains.end()) break;
          std::vector<std::string> inner = accepted;
          const End e = chain(it->second, why, inner, depth + 1);
          if (all && outer.empty() && e != End::kFall) return e;
          break;
        }
        case Verdict::kReturn:
          if (all) return End::kFall;
          break;
        case Verdict::kNone:
          break;
      }
    }
    if (c.base && c.policy_drop) {
      out.push_back(
          BlockingRule{rs.tool, c.label, c.policy_text, with_exceptions(outer, accepted)});
      return outer.empty() ? End::kDrop : End::kFall;
    }
    return End::kFall;
  }

  static std::string with_exceptions(const std::string& why,
                                     const std::vector<std::string>& accepted) {
    if (accepted.empty()) return why;
    std::string s = why.empty() ? "" : why + "; ";
    s += "not those accepted earlier by: ";
    for (size_t i = 0; i < accepted.size(); ++i) s += (i ? " | " : "") + accepted[i];
    return s;
  }
};

std::vector<BlockingRule> evaluate(const Ruleset& rs) {
  std::vector<BlockingRule> out;
  Walk w{rs, out};
  for (const auto& name : rs.base) {
    std::vector<std::string> accepted;
    w.chain(rs.chains.at(name), "", accepted, 0);
  }
  return out;
}

// ---------------------------------------------------------------------------
// iptables-save / iptables -S

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

// "4791", "4000:5000", "80,4791" (multiport), nft "4000-5000"
bool port_spec_matches(const std::string& spec) {
  std::istringstream in(spec);
  for (std::string part; std::getline(in, part, ',');) {
    for (char& c : part) {
      if (c == '-') c = ':';
    }
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

// ---------------------------------------------------------------------------
// nft -j list ruleset

using nlohmann::json;

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  if (v.is_object()) {
    if (v.contains("set")) {
      std::string s = "{ ";
      for (const auto& e : v["set"]) s += (s.size() > 2 ? ", " : "") + value_text(e);
      return s + " }";
    }
    if (v.contains("range") && v["range"].is_array() && v["range"].size() == 2) {
      return value_text(v["range"][0]) + "-" + value_text(v["range"][1]);
    }
    if (v.contains("prefix")) {
      return value_text(v["prefix"].value("addr", json())) + "/" +
             value_text(v["prefix"].value("len", json()));
    }
  }
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ",") + value_text(e);
    return s;
  }
  return v.dump();
}

std::string left_text(const json& l) {
  if (l.contains("payload")) {
    const auto& p = l["payload"];
    return p.value("protocol", std::string("?")) + " " + p.value("field", std::string("?"));
  }
  if (l.contains("meta")) return "meta " + l["meta"].value("key", std::string("?"));
  if (l.contains("ct")) return "ct " + l["ct"].value("key", std::string("?"));
  return l.dump();
}

// The values a match's right side names, as text ("4791", "udp", "established").
std::vector<std::string> values(const json& v) {
  std::vector<std::string> out;
  if (v.is_object() && v.contains("set")) {
    for (const auto& e : v["set"]) {
      for (auto& x : values(e)) out.push_back(std::move(x));
    }
  } else if (v.is_array()) {
    for (const auto& e : v) out.push_back(value_text(e));
  } else {
    out.push_back(value_text(v));
  }
  return out;
}

bool any_of_values(const json& v, bool (*pred)(const std::string&)) {
  for (const auto& x : values(v)) {
    if (pred(x)) return true;
  }
  return false;
}

void nft_match(Rule& r, const json& m) {
  const json& l = m.value("left", json());
  const json& v = m.value("right", json());
  const std::string op = m.value("op", std::string("=="));
  const bool neg = op == "!=";
  const bool eq = op == "==" || op == "in" || neg;
  auto is = [&](bool yes) { return (yes != neg) ? Match::kAll : Match::kNo; };
  const std::string text =
      left_text(l) + " " + (op == "==" || op == "in" ? "" : op + " ") + value_text(v);
  if (l.contains("payload")) {
    const std::string proto = l["payload"].value("protocol", std::string());
    const std::string field = l["payload"].value("field", std::string());
    if (proto == "udp" && field == "dport" && eq) {
      narrow(r, is(any_of_values(v, [](const std::string& s) { return port_spec_matches(s); })),
             "");
    } else if (proto == "th" && field == "dport" && eq) {
      narrow(r, is(any_of_values(v, [](const std::string& s) { return port_spec_matches(s); })),
             "");
    } else if (proto != "udp" && proto != "ip" && proto != "ip6" && proto != "th" &&
               proto != "ether" && proto != "vlan") {
      narrow(r, Match::kNo, "");  // a tcp/icmp/sctp header: not a UDP packet
    } else if ((proto == "ip" && field == "protocol") || (proto == "ip6" && field == "nexthdr")) {
      narrow(r, is(any_of_values(v, [](const std::string& s) { return s == "udp" || s == "17"; })),
             "");
    } else {
      narrow(r, Match::kSome, "by " + text);
    }
  } else if (l.contains("meta")) {
    const std::string key = l["meta"].value("key", std::string());
    if (key == "l4proto" && eq) {
      narrow(r, is(any_of_values(v, [](const std::string& s) { return s == "udp" || s == "17"; })),
             "");
    } else if ((key == "iifname" || key == "oifname" || key == "iif" || key == "oif") && !neg &&
               eq && values(v) == std::vector<std::string>{"lo"}) {
      narrow(r, Match::kNo, "");
    } else {
      narrow(r, Match::kSome, "by " + text);
    }
  } else if (l.contains("ct") && l["ct"].value("key", std::string()) == "state" && eq) {
    narrow(
        r,
        is(any_of_values(v, [](const std::string& s) { return s == "new" || s == "untracked"; })),
        "");
  } else {
    narrow(r, Match::kSome, "by " + text);
  }
}

Rule nft_rule(const json& expr) {
  Rule r;
  std::string text;
  for (const auto& e : expr) {
    if (!e.is_object() || e.empty()) continue;
    const std::string k = e.begin().key();
    const json& v = e.begin().value();
    std::string piece;
    if (k == "match") {
      nft_match(r, v);
      const std::string op = v.value("op", std::string("=="));
      piece = left_text(v.value("left", json())) + " " +
              (op == "==" || op == "in" ? "" : op + " ") + value_text(v.value("right", json()));
    } else if (k == "accept") {
      r.verdict = Verdict::kAccept;
      piece = k;
    } else if (k == "drop" || k == "reject") {
      r.verdict = Verdict::kDrop;
      piece = k;
    } else if (k == "jump" || k == "goto") {
      r.verdict = Verdict::kJump;
      r.target = v.value("target", std::string());
      piece = k + " " + r.target;
    } else if (k == "return") {
      r.verdict = Verdict::kReturn;
      piece = k;
    } else if (k == "counter" || k == "log" || k == "comment") {
      continue;  // statements that do not decide
    } else if (k == "xt") {
      // An iptables-nft extension nft cannot show: only its kind and name.
      piece =
          fmt::format("xt {} {}", v.value("type", std::string()), v.value("name", std::string()));
      if (v.value("type", std::string()) == "match") narrow(r, Match::kSome, "by " + piece);
    } else {
      // limit, set lookups, ...
      narrow(r, Match::kSome, "by " + k);
      piece = k;
    }
    text += (text.empty() ? "" : " ") + piece;
  }
  r.text = text;
  return r;
}

// skip: tables ("ip filter") read from iptables-save instead.
std::vector<Ruleset> parse_nft_json(const std::string& text,
                                    const std::vector<std::string>& skip = {}) {
  std::vector<Ruleset> out;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("nftables") || !j["nftables"].is_array()) return out;
  std::map<std::string, Ruleset> tables;  // "family name"
  std::vector<std::string> order;
  auto skipped = [&](const json& o) {
    const std::string key =
        o.value("family", std::string()) + " " + o.value("table", std::string());
    return std::find(skip.begin(), skip.end(), key) != skip.end();
  };
  auto table = [&](const json& o) -> Ruleset& {
    const std::string key =
        o.value("family", std::string()) + " " + o.value("table", std::string());
    if (!tables.contains(key)) {
      order.push_back(key);
      tables[key].tool = "nft";
    }
    return tables[key];
  };
  for (const auto& item : j["nftables"]) {
    if (!item.is_object()) continue;
    if (item.contains("chain")) {
      const auto& c = item["chain"];
      const std::string family = c.value("family", std::string());
      if (family != "ip" && family != "ip6" && family != "inet") continue;
      if (skipped(c)) continue;
      Ruleset& rs = table(c);
      Chain& ch = rs.chains[c.value("name", std::string())];
      ch.name = c.value("name", std::string());
      ch.label = fmt::format("{} {} {}", family, c.value("table", std::string()), ch.name);
      const std::string hook = c.value("hook", std::string());
      if (c.value("type", std::string()) == "filter" &&
          (hook == "input" || hook == "output" || hook == "prerouting")) {
        ch.base = true;
        ch.policy_drop = c.value("policy", std::string("accept")) == "drop";
        ch.policy_text =
            fmt::format("table {} {} chain {} policy {}", family, c.value("table", std::string()),
                        ch.name, c.value("policy", std::string("accept")));
        rs.base.push_back(ch.name);
      }
    } else if (item.contains("rule")) {
      const auto& r = item["rule"];
      const std::string family = r.value("family", std::string());
      if (family != "ip" && family != "ip6" && family != "inet") continue;
      if (!r.contains("expr") || !r["expr"].is_array() || skipped(r)) continue;
      Ruleset& rs = table(r);
      rs.chains[r.value("chain", std::string())].rules.push_back(nft_rule(r["expr"]));
    }
  }
  for (const auto& k : order) out.push_back(std::move(tables[k]));
  return out;
}

}  // namespace

std::string render(const BlockingRule& r) {
  std::string s = r.tool != "nft"   ? fmt::format("{} {}", r.tool, r.text)
                  : r.chain.empty() ? fmt::format("nft: {}", r.text)
                                    : fmt::format("nft {}: {}", r.chain, r.text);
  if (!r.only.empty()) s += kSomeMarker + r.only + "]";
  return s;
}

bool matches_only_some(const std::string& rendered) {
  return rendered.find(kSomeMarker) != std::string::npos;
}

std::vector<BlockingRule> roce_blocking_iptables(const std::string& text, const std::string& tool) {
  return evaluate(parse_iptables(text, tool));
}

std::vector<BlockingRule> roce_blocking_nft_json(const std::string& text,
                                                 const std::vector<std::string>& skip) {
  std::vector<BlockingRule> out;
  for (const auto& rs : parse_nft_json(text, skip)) {
    for (auto& b : evaluate(rs)) out.push_back(std::move(b));
  }
  return out;
}

std::vector<std::string> roce_blocking_iptables_rules(const std::string& iptables_s) {
  std::vector<std::string> out;
  for (const auto& b : roce_blocking_iptables(iptables_s)) out.push_back(b.text);
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
  const std::vector<std::vector<std::string>> argvs = {{"nft", "-j", "list", "ruleset"},
                                                       {"iptables-legacy-save"},
                                                       {"ip6tables-legacy-save"},
                                                       {"iptables-save"},
                                                       {"ip6tables-save"}};
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
  const auto ok = [](const ToolRun& t) { return t.started && t.exit_status == 0; };
  const auto note = [&](const ToolRun& t) {
    notes.push_back(t.started ? t.command + " failed (root needed?)"
                              : t.command.substr(0, t.command.find(' ')) + " not installed");
  };
  const auto find = [&](const std::string& command) -> const ToolRun* {
    for (const auto& t : runs) {
      if (t.command == command) return &t;
    }
    return nullptr;
  };
  const auto add_source = [&](const std::string& s) {
    r.source += (r.source.empty() ? "" : ", ") + s;
  };
  const auto add = [&](std::vector<BlockingRule> rules) {
    for (auto& b : rules) r.blocking.push_back(std::move(b));
  };
  // nft first: iptables-nft's rules live in the same ruleset. Its tables
  // (ip/ip6 filter) are read from iptables-save, which shows them as the user
  // wrote them (nft's JSON shows -m length only as "xt match length").
  const ToolRun* nft_json = find("nft -j list ruleset");
  if (nft_json != nullptr && ok(*nft_json) &&
      nlohmann::json::accept(nft_json->out.empty() ? "{}" : nft_json->out)) {
    r.readable = true;
    std::vector<std::string> skip;
    std::vector<const ToolRun*> texts;
    for (const auto& [cmd, table] :
         {std::pair{"iptables-save", "ip filter"}, std::pair{"ip6tables-save", "ip6 filter"}}) {
      const ToolRun* t = find(cmd);
      if (t == nullptr || !ok(*t) || t->out.find("(nf_tables)") == std::string::npos) continue;
      skip.emplace_back(table);
      texts.push_back(t);
    }
    add_source(nft_json->command);
    add(roce_blocking_nft_json(nft_json->out, skip));
    for (const ToolRun* t : texts) {
      add_source(t->command);
      add(roce_blocking_iptables(t->out, t->command.substr(0, t->command.find('-'))));
    }
    for (const char* legacy : {"iptables-legacy-save", "ip6tables-legacy-save"}) {
      const ToolRun* t = find(legacy);
      if (t == nullptr || !ok(*t) || t->out.empty()) continue;
      add_source(t->command);
      add(roce_blocking_iptables(t->out, t->command.substr(0, t->command.find("-save"))));
    }
  } else {
    if (nft_json != nullptr) note(*nft_json);
    // Without nft: the iptables text, new captures' -save or older ones' -S.
    for (const char* cmd : {"iptables-save", "ip6tables-save", "iptables -S", "ip6tables -S"}) {
      const ToolRun* t = find(cmd);
      if (t == nullptr) continue;
      if (!ok(*t)) {
        note(*t);
        continue;
      }
      r.readable = true;
      add_source(t->command);
      const std::string tool = t->command.substr(0, t->command.find_first_of(" -"));
      add(roce_blocking_iptables(t->out, tool));
    }
    const ToolRun* nft_text = find("nft list ruleset");
    if (nft_text != nullptr && r.blocking.empty()) {
      if (ok(*nft_text)) {
        r.readable = true;
        add_source(nft_text->command);
        for (auto& rule : roce_blocking_nft_rules(nft_text->out)) {
          r.blocking.push_back(BlockingRule{"nft", "", std::move(rule), ""});
        }
      } else {
        note(*nft_text);
      }
    }
  }
  for (const auto& b : r.blocking) r.rules.push_back(render(b));
  if (!r.readable) {
    for (const auto& n : notes) r.note += (r.note.empty() ? "" : "; ") + n;
  }
  return r;
}

FirewallReport read_firewall() { return evaluate_firewall(collect_firewall_outputs()); }

}  // namespace rdmacheck
