#include "host/firewall.h"

#include <fmt/core.h>

#include <algorithm>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/subprocess.h"
#include "host/firewall_model.h"
#include "net/ip_match.h"

namespace rdmacheck {
namespace {

using fw::evaluate;
using fw::parse_iptables;
using fw::parse_nft_json;
using fw::port_spec_matches;

constexpr const char* kSomeMarker = " [matches only some packets: ";

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
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

bool address_in_prefix(const std::string& address, const std::string& prefix) {
  const auto ip = parse_ip(address);
  const auto cidr = parse_cidr(prefix);
  return ip && cidr && contains(*cidr, *ip);
}

bool covers_path(const std::string& rendered, const std::vector<std::string>& addresses) {
  const auto at = rendered.find(kSomeMarker);
  if (at == std::string::npos || rendered.back() != ']') return false;
  const size_t from = at + std::string(kSomeMarker).size();
  const std::string only = rendered.substr(from, rendered.size() - 1 - from);
  bool any = false;
  size_t pos = 0;
  while (pos <= only.size()) {
    const auto end = only.find(fw::kAndCondition, pos);
    const auto w = words(only.substr(pos, end == std::string::npos ? end : end - pos));
    // "by source X", "by destination X", "by ip saddr X", "by ip6 daddr X"
    const bool iptables =
        w.size() == 3 && w[0] == "by" && (w[1] == "source" || w[1] == "destination");
    const bool nft = w.size() == 4 && w[0] == "by" && (w[1] == "ip" || w[1] == "ip6") &&
                     (w[2] == "saddr" || w[2] == "daddr");
    if (!iptables && !nft) return false;
    const std::string& prefix = w.back();
    if (std::none_of(addresses.begin(), addresses.end(),
                     [&](const std::string& a) { return address_in_prefix(a, prefix); })) {
      return false;
    }
    any = true;
    if (end == std::string::npos) break;
    pos = end + std::string(fw::kAndCondition).size();
  }
  return any;
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

std::vector<ToolRun> run_tools(const std::vector<std::vector<std::string>>& argvs,
                               std::chrono::milliseconds within) {
  // All at once and under one deadline: they share the CPU, so a deadline per
  // tool would be met by each alone and missed by all together.
  std::vector<std::future<ToolRun>> running;
  running.reserve(argvs.size());
  for (const auto& argv : argvs) {
    running.push_back(std::async(std::launch::async, [&argv, within] {
      ToolRun t;
      for (const auto& a : argv) t.command += (t.command.empty() ? "" : " ") + a;
      if (auto res = run_capture(argv, within)) {
        t.started = true;
        t.exit_status = res->exit_status;
        t.timed_out = res->timed_out;
        t.out = std::move(res->out);
      }
      return t;
    }));
  }
  std::vector<ToolRun> runs;
  runs.reserve(running.size());
  for (auto& r : running) runs.push_back(r.get());
  return runs;
}

nlohmann::json tool_runs_json(const std::vector<ToolRun>& runs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& t : runs) {
    a.push_back({{"command", t.command},
                 {"started", t.started},
                 {"exit_status", t.exit_status},
                 {"timed_out", t.timed_out},
                 {"out", t.out}});
  }
  return a;
}

std::vector<ToolRun> tool_runs_from_json(const nlohmann::json& j) {
  std::vector<ToolRun> runs;
  if (!j.is_array()) return runs;
  for (const auto& r : j) {
    runs.push_back({r.value("command", ""), r.value("started", false), r.value("exit_status", -1),
                    r.value("out", ""), r.value("timed_out", false)});
  }
  return runs;
}

const ToolRun* successful_run(const std::vector<ToolRun>& runs, const std::string& command) {
  for (const auto& r : runs) {
    if (r.command == command && r.started && r.exit_status == 0) return &r;
  }
  return nullptr;
}

std::vector<ToolRun> collect_firewall_outputs(std::chrono::milliseconds within) {
  return run_tools({{"nft", "-j", "list", "ruleset"},
                    {"iptables-legacy-save"},
                    {"ip6tables-legacy-save"},
                    {"iptables-save"},
                    {"ip6tables-save"}},
                   within);
}

namespace {

// One reading of the tools' outputs into a report: which tool to believe,
// what each said, and why none could be read.
class FirewallReading {
 public:
  explicit FirewallReading(const std::vector<ToolRun>& runs) : runs_(runs) {}
  FirewallReport read() &&;

 private:
  static bool ok(const ToolRun& t) { return t.started && t.exit_status == 0; }
  void note(const ToolRun& t);
  [[nodiscard]] const ToolRun* find(const std::string& command) const;
  void add(const ToolRun& t, std::vector<BlockingRule> rules);
  void from_nft_json(const ToolRun& nft_json);
  void from_iptables();

  const std::vector<ToolRun>& runs_;
  FirewallReport r_;
  std::vector<std::string> notes_;
};

void FirewallReading::note(const ToolRun& t) {
  if (!t.started) {
    notes_.push_back(t.command.substr(0, t.command.find(' ')) + " not installed");
  } else if (t.timed_out) {
    r_.timed_out = true;
    notes_.push_back(t.command + " did not finish in time");
  } else {
    notes_.push_back(t.command + " failed (root needed?)");
  }
}

const ToolRun* FirewallReading::find(const std::string& command) const {
  for (const auto& t : runs_) {
    if (t.command == command) return &t;
  }
  return nullptr;
}

// T was read: it is a source, and RULES are what it blocks.
void FirewallReading::add(const ToolRun& t, std::vector<BlockingRule> rules) {
  r_.source += (r_.source.empty() ? "" : ", ") + t.command;
  for (auto& b : rules) r_.blocking.push_back(std::move(b));
}

// nft first: iptables-nft's rules live in the same ruleset. Its tables
// (ip/ip6 filter) are read from iptables-save, which shows them as the user
// wrote them (nft's JSON shows -m length only as "xt match length").
void FirewallReading::from_nft_json(const ToolRun& nft_json) {
  r_.readable = true;
  std::vector<std::string> skip;
  std::vector<const ToolRun*> texts;
  for (const auto& [cmd, table] :
       {std::pair{"iptables-save", "ip filter"}, std::pair{"ip6tables-save", "ip6 filter"}}) {
    const ToolRun* t = find(cmd);
    if (t == nullptr || !ok(*t) || t->out.find("(nf_tables)") == std::string::npos) continue;
    skip.emplace_back(table);
    texts.push_back(t);
  }
  add(nft_json, roce_blocking_nft_json(nft_json.out, skip));
  for (const ToolRun* t : texts) {
    add(*t, roce_blocking_iptables(t->out, t->command.substr(0, t->command.find('-'))));
  }
  for (const char* legacy : {"iptables-legacy-save", "ip6tables-legacy-save"}) {
    const ToolRun* t = find(legacy);
    if (t == nullptr || !ok(*t) || t->out.empty()) continue;
    add(*t, roce_blocking_iptables(t->out, t->command.substr(0, t->command.find("-save"))));
  }
}

// Without nft: the iptables text, new captures' -save or older ones' -S,
// then nft's own text when those block nothing.
void FirewallReading::from_iptables() {
  for (const char* cmd : {"iptables-save", "ip6tables-save", "iptables -S", "ip6tables -S"}) {
    const ToolRun* t = find(cmd);
    if (t == nullptr) continue;
    if (!ok(*t)) {
      note(*t);
      continue;
    }
    r_.readable = true;
    add(*t, roce_blocking_iptables(t->out, t->command.substr(0, t->command.find_first_of(" -"))));
  }
  const ToolRun* nft_text = find("nft list ruleset");
  if (nft_text == nullptr || !r_.blocking.empty()) return;
  if (!ok(*nft_text)) return note(*nft_text);
  r_.readable = true;
  std::vector<BlockingRule> rules;
  for (auto& rule : roce_blocking_nft_rules(nft_text->out)) {
    rules.push_back(BlockingRule{"nft", "", std::move(rule), ""});
  }
  add(*nft_text, std::move(rules));
}

FirewallReport FirewallReading::read() && {
  const ToolRun* nft_json = find("nft -j list ruleset");
  if (nft_json != nullptr && ok(*nft_json) &&
      nlohmann::json::accept(nft_json->out.empty() ? "{}" : nft_json->out)) {
    from_nft_json(*nft_json);
  } else {
    if (nft_json != nullptr) note(*nft_json);
    from_iptables();
  }
  for (const auto& b : r_.blocking) r_.rules.push_back(render(b));
  if (!r_.readable) {
    for (const auto& n : notes_) r_.note += (r_.note.empty() ? "" : "; ") + n;
  }
  return std::move(r_);
}

}  // namespace

FirewallReport evaluate_firewall(const std::vector<ToolRun>& runs) {
  return FirewallReading(runs).read();
}

FirewallReport read_firewall(std::chrono::milliseconds within) {
  return evaluate_firewall(collect_firewall_outputs(within));
}

}  // namespace rdmacheck