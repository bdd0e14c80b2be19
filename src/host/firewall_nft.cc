// nft -j list ruleset into the chain model (firewall_model.h).
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "host/firewall_model.h"

namespace rdmacheck::fw {
namespace {

using nlohmann::json;

// nft's JSON as libnftables-json(5) documents it, read without trusting its
// shape: a member that is missing or of another type reads as absent (null,
// or the default text), so an odd document gives fewer matches, never an
// exception (nlohmann's value() throws on a non-object or a wrong type).
const json& member(const json& o, const char* key) {
  static const json absent;
  if (!o.is_object()) return absent;
  const auto it = o.find(key);
  return it == o.end() ? absent : *it;
}
std::string string_of(const json& o, const char* key, const char* dflt = "") {
  const json& v = member(o, key);
  return v.is_string() ? v.get<std::string>() : std::string(dflt);
}

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
      return value_text(member(v["prefix"], "addr")) + "/" + value_text(member(v["prefix"], "len"));
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
    return string_of(p, "protocol", "?") + " " + string_of(p, "field", "?");
  }
  if (l.contains("meta")) return "meta " + string_of(l["meta"], "key", "?");
  if (l.contains("ct")) return "ct " + string_of(l["ct"], "key", "?");
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
  const json& l = member(m, "left");
  const json& v = member(m, "right");
  const std::string op = string_of(m, "op", "==");
  const bool neg = op == "!=";
  const bool eq = op == "==" || op == "in" || neg;
  auto is = [&](bool yes) { return (yes != neg) ? Match::kAll : Match::kNo; };
  const std::string text =
      left_text(l) + " " + (op == "==" || op == "in" ? "" : op + " ") + value_text(v);
  if (l.contains("payload")) {
    const std::string proto = string_of(l["payload"], "protocol");
    const std::string field = string_of(l["payload"], "field");
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
    const std::string key = string_of(l["meta"], "key");
    if (key == "l4proto" && eq) {
      narrow(r, is(any_of_values(v, [](const std::string& s) { return s == "udp" || s == "17"; })),
             "");
    } else if ((key == "iifname" || key == "oifname" || key == "iif" || key == "oif") && !neg &&
               eq && values(v) == std::vector<std::string>{"lo"}) {
      narrow(r, Match::kNo, "");
    } else {
      narrow(r, Match::kSome, "by " + text);
    }
  } else if (l.contains("ct") && string_of(l["ct"], "key") == "state" && eq) {
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
      const std::string op = string_of(v, "op", "==");
      piece = left_text(member(v, "left")) + " " + (op == "==" || op == "in" ? "" : op + " ") +
              value_text(member(v, "right"));
    } else if (k == "accept") {
      r.verdict = Verdict::kAccept;
      piece = k;
    } else if (k == "drop" || k == "reject") {
      r.verdict = Verdict::kDrop;
      piece = k;
    } else if (k == "jump" || k == "goto") {
      r.verdict = Verdict::kJump;
      r.target = string_of(v, "target");
      piece = k + " " + r.target;
    } else if (k == "return") {
      r.verdict = Verdict::kReturn;
      piece = k;
    } else if (k == "counter" || k == "log" || k == "comment") {
      continue;  // statements that do not decide
    } else if (k == "xt") {
      // An iptables-nft extension nft cannot show: only its kind and name.
      piece = fmt::format("xt {} {}", string_of(v, "type"), string_of(v, "name"));
      if (string_of(v, "type") == "match") narrow(r, Match::kSome, "by " + piece);
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

}  // namespace

std::vector<Ruleset> parse_nft_json(const std::string& text, const std::vector<std::string>& skip) {
  std::vector<Ruleset> out;
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("nftables") || !j["nftables"].is_array()) return out;
  std::map<std::string, Ruleset> tables;  // "family name"
  std::vector<std::string> order;
  auto skipped = [&](const json& o) {
    const std::string key = string_of(o, "family") + " " + string_of(o, "table");
    return std::find(skip.begin(), skip.end(), key) != skip.end();
  };
  auto table = [&](const json& o) -> Ruleset& {
    const std::string key = string_of(o, "family") + " " + string_of(o, "table");
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
      const std::string family = string_of(c, "family");
      if (family != "ip" && family != "ip6" && family != "inet") continue;
      if (skipped(c)) continue;
      Ruleset& rs = table(c);
      Chain& ch = rs.chains[string_of(c, "name")];
      ch.name = string_of(c, "name");
      ch.label = fmt::format("{} {} {}", family, string_of(c, "table"), ch.name);
      const std::string hook = string_of(c, "hook");
      if (string_of(c, "type") == "filter" &&
          (hook == "input" || hook == "output" || hook == "prerouting")) {
        ch.base = true;
        ch.policy_drop = string_of(c, "policy", "accept") == "drop";
        ch.policy_text =
            fmt::format("table {} {} chain {} policy {}", family, string_of(c, "table"), ch.name,
                        string_of(c, "policy", "accept"));
        rs.base.push_back(ch.name);
      }
    } else if (item.contains("rule")) {
      const auto& r = item["rule"];
      const std::string family = string_of(r, "family");
      if (family != "ip" && family != "ip6" && family != "inet") continue;
      if (!r.contains("expr") || !r["expr"].is_array() || skipped(r)) continue;
      Ruleset& rs = table(r);
      rs.chains[string_of(r, "chain")].rules.push_back(nft_rule(r["expr"]));
    }
  }
  for (const auto& k : order) out.push_back(std::move(tables[k]));
  return out;
}

}  // namespace rdmacheck::fw
