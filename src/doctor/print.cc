// One walk over a DoctorReport renders it: as text grouped by layer, or as
// the JSON document with the same checks, facts and findings.
#include <fmt/core.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "doctor/doctor.h"
#include "doctor/memlock.h"

namespace rdmacheck::doctor {
namespace {

std::string fact_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_array()) {
    if (v.empty()) return "none";
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ", ") + fact_text(e);
    return out;
  }
  if (v.is_object()) {
    if (v.empty()) return "none";
    std::string out;
    for (const auto& [k, e] : v.items()) out += (out.empty() ? "" : ", ") + k + " " + fact_text(e);
    return out;
  }
  return v.dump();
}

// JSON keeps numbers with the unit in the key ("soft_bytes": 8388608); the
// text shows the key without its unit and the number with it ("soft 8 MiB").
struct UnitSuffix {
  std::string_view suffix;
  std::string (*show)(double v);
};
std::string show_bytes(double v) {
  const auto b = static_cast<uint64_t>(v);
  // Sizes that are whole KiB/MiB/GiB from 64 KiB up read better so; MTUs stay bytes.
  if (b >= (64u << 10) && b % 1024 == 0) return bytes_text(b);
  return fmt::format("{} B", b);
}
constexpr UnitSuffix kUnits[] = {
    {"_bytes", show_bytes},
    {"_gbps", [](double v) { return fmt::format("{:g} Gb/s", v); }},
    {"_gts", [](double v) { return fmt::format("{:g} GT/s", v); }},
};

std::pair<std::string, std::string> fact_line(const std::string& key, const nlohmann::json& v) {
  for (const auto& u : kUnits) {
    if (key.size() > u.suffix.size() && key.ends_with(u.suffix)) {
      return {key.substr(0, key.size() - u.suffix.size()),
              v.is_number() ? u.show(v.get<double>()) : fact_text(v)};
    }
  }
  return {key, fact_text(v)};
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  return s;
}

// Renders text or JSON; the report is walked once, each element emitted in the chosen form.
class Emitter {
 public:
  explicit Emitter(bool json, Detail detail = Detail::kNormal)
      : json_(json), facts_(detail == Detail::kVerbose) {}

  void header(const DoctorReport& r) {
    if (json_) {
      doc_["host"] = {{"hostname", r.hostname}, {"kernel", r.kernel}, {"root", r.root}};
      doc_["checks"] = nlohmann::json::array();
      doc_["findings"] = nlohmann::json::array();
      return;
    }
    // The kernel is in the ticket header above (and in the JSON's host).
    text_ += fmt::format("rdmacheck doctor: {}{}\n", r.hostname.empty() ? "?" : r.hostname,
                         r.root == "/" ? "" : ", replaying the capture in " + r.root);
  }

  void layer(Layer l) {
    if (!json_) text_ += fmt::format("\n{} LAYER\n", upper(layer_name(l)));
  }

  void check(const CheckResult& c) {
    if (json_) {
      nlohmann::json facts = nlohmann::json::object();
      for (const auto& [k, v] : c.facts) facts[k] = v;
      nlohmann::json ids = nlohmann::json::array();
      for (const auto& f : c.findings) ids.push_back(std::string(id_name(f)));
      doc_["checks"].push_back({{"check", c.check},
                                {"layer", layer_name(c.layer)},
                                {"subject", c.subject},
                                {"status", severity_name(c.status())},
                                {"facts", facts},
                                {"findings", ids}});
      for (const auto& f : c.findings) doc_["findings"].push_back(rdmacheck::to_json(f));
      return;
    }
    text_ +=
        fmt::format("  [{:<4}] {:<12} {}\n", upper(severity_name(c.status())), c.check, c.subject);
    for (const auto& [key, v] : c.facts) {
      if (!facts_) break;  // one line per check by default; the facts with -v
      const auto [k, t] = fact_line(key, v);
      if (v.is_array() && t.size() > 70) {  // long lists (the GID table): one entry a line
        text_ += fmt::format("           {}\n", k);
        for (const auto& e : v) text_ += fmt::format("             {}\n", fact_text(e));
      } else {
        text_ += fmt::format("           {:<22} {}\n", k, t);
      }
    }
    for (const auto& f : c.findings) {
      std::string block = format_finding(f);
      text_ += "         ";
      for (size_t i = 0; i < block.size(); ++i) {
        text_ += block[i];
        if (block[i] == '\n' && i + 1 < block.size()) text_ += "         ";
      }
    }
  }

  void summary(const DoctorReport& r) {
    int n[4] = {0, 0, 0, 0};
    for (const auto& f : r.findings()) ++n[static_cast<int>(f.severity)];
    const int fails = n[static_cast<int>(Severity::kFail)];
    const int warns = n[static_cast<int>(Severity::kWarn)];
    const int infos = n[static_cast<int>(Severity::kInfo)];
    if (json_) {
      doc_["summary"] = {{"fail", fails}, {"warn", warns}, {"info", infos}};
      return;
    }
    text_ += fmt::format("\n{} failure{}, {} warning{}, {} note{} (exit status {})\n", fails,
                         fails == 1 ? "" : "s", warns, warns == 1 ? "" : "s", infos,
                         infos == 1 ? "" : "s", r.exit_status());
  }

  nlohmann::json doc() const { return doc_; }
  std::string out() const { return json_ ? doc_.dump(2) + "\n" : text_; }

 private:
  bool json_;
  bool facts_;
  nlohmann::json doc_;
  std::string text_;
};

Emitter emit(const DoctorReport& r, bool json, Detail detail = Detail::kNormal) {
  Emitter e(json, detail);
  e.header(r);
  for (Layer l : {Layer::kDevice, Layer::kConnection, Layer::kPerformance}) {
    e.layer(l);
    for (const auto& c : r.checks) {
      if (c.layer == l) e.check(c);
    }
  }
  e.summary(r);
  return e;
}

}  // namespace

std::string format_text(const DoctorReport& r, const TextStyle& style) {
  return emit(r, false, style.detail).out();
}

nlohmann::json to_json(const DoctorReport& r) { return emit(r, true).doc(); }

}  // namespace rdmacheck::doctor
