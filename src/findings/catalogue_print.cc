// The catalogue's printers: `rdmacheck explain` (text, JSON) and
// docs/findings.md, all from the same entries.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "findings/catalogue.h"

namespace rdmacheck {
namespace {

constexpr size_t kWidth = 80;

// TEXT as lines of at most kWidth columns, each starting with INDENT.
std::string wrapped(std::string_view text, std::string_view indent) {
  std::string out;
  std::string line(indent);
  size_t from = 0;
  while (from < text.size()) {
    size_t to = text.find(' ', from);
    if (to == std::string_view::npos) to = text.size();
    const std::string_view word = text.substr(from, to - from);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += ' ';
    line += word;
    from = to + 1;
  }
  if (line.size() > indent.size()) out += line + "\n";
  return out;
}

std::string upper(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  return u;
}

// The meaning's first clause, for the list of all ids: up to the first
// sentence end, colon or semicolon, without the full stop.
std::string_view first_clause(std::string_view s) {
  size_t end = s.size();
  for (const char* stop : {". ", ": ", "; "}) end = std::min(end, s.find(stop));
  s = s.substr(0, end);
  return !s.empty() && s.back() == '.' ? s.substr(0, s.size() - 1) : s;
}

size_t widest_id() {
  size_t w = 0;
  for (const auto& [id, name] : EnumNames<FindingId>::table) w = std::max(w, name.size());
  return w;
}

std::string format_entry(const CatalogueEntry& e) {
  std::string out = fmt::format("{}\n", name_of(e.id));
  out += wrapped(fmt::format("raised by: {}", e.raised_by), "  ");
  out += "\n" + wrapped(e.meaning, "  ") + "\n";
  out += "  severity:\n";
  for (const auto& s : e.severities) {
    if (s.when.empty()) continue;
    out += wrapped(fmt::format("{:<4} {}", upper(severity_name(s.severity)), s.when), "    ");
  }
  if (!e.evidence.empty()) out += "  evidence:\n" + wrapped(e.evidence, "    ");
  out += "  fix:\n" + wrapped(e.fix.empty() ? "none: it states a fact" : e.fix, "    ");
  return out;
}

nlohmann::json entry_json(const CatalogueEntry& e) {
  nlohmann::json sev = nlohmann::json::array();
  for (const auto& s : e.severities) {
    if (!s.when.empty()) sev.push_back({{"severity", severity_name(s.severity)}, {"when", s.when}});
  }
  return {{"id", name_of(e.id)},  {"raised_by", e.raised_by}, {"severities", sev},
          {"meaning", e.meaning}, {"evidence", e.evidence},   {"fix", e.fix}};
}

}  // namespace

nlohmann::json to_json(const ExplainReport& r) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto* e : r.entries) a.push_back(entry_json(*e));
  return {{"findings", a}};
}

std::string format_text(const ExplainReport& r, const TextStyle& /*style*/) {
  std::string out;
  if (r.listing) {
    const size_t w = widest_id();
    for (const auto* e : r.entries) {
      out += fmt::format("{:<{}}  {}\n", name_of(e->id), w, first_clause(e->meaning));
    }
    out += "\n'rdmacheck explain ID' says when each is raised, on what evidence, and the fix.\n";
    return out;
  }
  for (const auto* e : r.entries) out += (out.empty() ? "" : "\n") + format_entry(*e);
  return out;
}

std::string catalogue_markdown() {
  std::string out =
      "# Findings\n\n"
      "<!-- Generated from src/findings/catalogue_*.inc by `rdmacheck explain --markdown`;\n"
      "     do not edit: ctest docs.findings_current fails when this file is stale. -->\n\n"
      "Every finding rdmacheck can print, by id. Each printed finding ends with\n"
      "`(rdmacheck explain ID)`, which prints the same entry; the finding itself\n"
      "carries the values it read (evidence) and a fix for the case at hand.\n\n"
      "| id | raised by | meaning |\n| --- | --- | --- |\n";
  for (const auto& e : catalogue()) {
    out += fmt::format("| [`{0}`](#{0}) | {1} | {2} |\n", name_of(e.id), e.raised_by,
                       first_clause(e.meaning));
  }
  for (const auto& e : catalogue()) {
    out += fmt::format("\n## {}\n\n{}\n\n", name_of(e.id), e.meaning);
    out += fmt::format("Raised by: {}.\n\n", e.raised_by);
    for (const auto& s : e.severities) {
      if (!s.when.empty()) out += fmt::format("- **{}**: {}\n", severity_name(s.severity), s.when);
    }
    if (!e.evidence.empty()) out += fmt::format("\n**Evidence:** {}\n", e.evidence);
    out += fmt::format("\n**Fix:** {}\n", e.fix.empty() ? "none: it states a fact." : e.fix);
  }
  return out;
}

}  // namespace rdmacheck
