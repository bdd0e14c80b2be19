// The words for every finding id, one entry each, keyed by the typed id:
// which command raises it, the severities it can carry and when, what it
// means, what evidence it rests on, and what to do. `rdmacheck explain` and
// docs/findings.md are drawn from this one table; the rules that raise the
// findings say the same things about one case, with the values they read.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/text_style.h"
#include "findings/finding.h"

namespace rdmacheck {

struct SeverityWhen {
  Severity severity = Severity::kInfo;
  std::string_view when;  // "" marks an unused row
};

struct CatalogueEntry {
  FindingId id = FindingId::kForeign;
  std::string_view raised_by;                // the commands and checks that raise it
  std::array<SeverityWhen, 3> severities{};  // the rows in use come first
  std::string_view meaning;
  std::string_view evidence;  // what the finding's evidence lines show
  std::string_view fix;       // "" when there is nothing to do
};

// Every id's entry, in enum order (complete by construction: checked at
// compile time in catalogue.cc).
const std::array<CatalogueEntry, kFindingIdCount>& catalogue();
const CatalogueEntry& catalogue_entry(FindingId id);

// The known ids nearest to TEXT by edit distance (a typo, a missing word),
// best first, at most MAX; none when nothing is close.
std::vector<std::string_view> close_ids(std::string_view text, size_t max = 3);

// `rdmacheck explain`: one entry, or (no id given) the list of all.
struct ExplainReport {
  std::vector<const CatalogueEntry*> entries;
  bool listing = false;  // all ids, one line each
};
// An entry found (or the list) is a success: explain exits 0.
inline int exit_status(const ExplainReport&) { return 0; }
nlohmann::json to_json(const ExplainReport& r);
std::string format_text(const ExplainReport& r, const TextStyle& style);

// docs/findings.md, generated from the table (`rdmacheck explain --markdown`).
std::string catalogue_markdown();

}  // namespace rdmacheck
