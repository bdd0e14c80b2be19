// The walk of a filter table for a RoCE v2 packet (firewall_model.h).
#include <algorithm>
#include <sstream>

#include "host/firewall_model.h"

namespace rdmacheck::fw {

constexpr int kRocePort = 4791;

void narrow(Rule& r, Match m, const std::string& why) {
  if (m == Match::kNo) r.match = Match::kNo;
  if (m == Match::kSome && r.match == Match::kAll) {
    r.match = Match::kSome;
    r.only = why;
  } else if (m == Match::kSome && r.match == Match::kSome && !why.empty()) {
    r.only += kAndCondition + why;  // every condition, so none is mistaken for the only one
  }
}

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

namespace {

enum class End { kFall, kAccept, kDrop };

// Rules a walk looks at, at most: a real table needs a few thousand; a text
// whose chains jump into each other many times over (a loop the kernel would
// refuse, or a deep fan of jumps) would take exponential time otherwise.
constexpr long kMaxSteps = 200000;

struct Walk {
  const Ruleset& rs;
  std::vector<BlockingRule>& out;
  long steps = 0;
  std::vector<const Chain*> stack;  // the chains being walked: a jump back into one is a loop

  // Walks CHAIN for a RoCE packet. outer: why the packets reaching it are only
  // some of them (a narrowing jump); accepted: rules that let some through first.
  End chain(const Chain& c, const std::string& outer, std::vector<std::string>& accepted,
            int depth) {
    if (depth > 16) return End::kFall;  // deeper than the kernel allows
    stack.push_back(&c);
    const End e = rules_of(c, outer, accepted, depth);
    stack.pop_back();
    return e;
  }

  End rules_of(const Chain& c, const std::string& outer, std::vector<std::string>& accepted,
               int depth) {
    for (const auto& r : c.rules) {
      if (++steps > kMaxSteps) return End::kFall;
      if (r.match == Match::kNo) continue;
      const bool all = r.match == Match::kAll;
      const std::string why = !outer.empty() ? outer : all ? "" : r.only;
      switch (r.verdict) {
        case Verdict::kAccept:
          if (all && outer.empty()) return End::kAccept;
          accepted.push_back(r.text);
          break;
        case Verdict::kDrop:
          add(BlockingRule{rs.tool, c.label, r.text, with_exceptions(why, accepted)});
          if (all && outer.empty()) return End::kDrop;
          break;
        case Verdict::kJump: {
          auto it = rs.chains.find(r.target);
          if (it == rs.chains.end()) break;
          // A loop: the kernel refuses such a table, so this text is not one it holds.
          if (std::find(stack.begin(), stack.end(), &it->second) != stack.end()) break;
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
      add(BlockingRule{rs.tool, c.label, c.policy_text, with_exceptions(outer, accepted)});
      return outer.empty() ? End::kDrop : End::kFall;
    }
    return End::kFall;
  }

  // A rule met again on another path through the jumps is said once.
  void add(BlockingRule b) {
    for (const auto& o : out) {
      if (o.chain == b.chain && o.text == b.text && o.only == b.only) return;
    }
    out.push_back(std::move(b));
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

}  // namespace

std::vector<BlockingRule> evaluate(const Ruleset& rs) {
  std::vector<BlockingRule> out;
  Walk w{rs, out};
  for (const auto& name : rs.base) {
    std::vector<std::string> accepted;
    w.chain(rs.chains.at(name), "", accepted, 0);
  }
  return out;
}

}  // namespace rdmacheck::fw
