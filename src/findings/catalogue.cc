#include "findings/catalogue.h"

#include <algorithm>
#include <string>

namespace rdmacheck {
namespace {

// The entries live beside the layer whose rules raise them; the table below
// puts each at its id's index.
#include "findings/catalogue_connection.inc"
#include "findings/catalogue_device.inc"
#include "findings/catalogue_performance.inc"

constexpr size_t kEntries =
    std::size(kDeviceEntries) + std::size(kConnectionEntries) + std::size(kPerformanceEntries);

constexpr std::array<CatalogueEntry, kFindingIdCount> make_table() {
  std::array<CatalogueEntry, kFindingIdCount> t{};
  // An id beyond the enum's (kForeign) is out of bounds: not a constant expression.
  auto put = [&t](const auto& group) {
    for (const auto& e : group) t.at(static_cast<size_t>(e.id)) = e;
  };
  put(kDeviceEntries);
  put(kConnectionEntries);
  put(kPerformanceEntries);
  return t;
}

constexpr auto kTable = make_table();

// Every slot filled by its own id, with words: as many entries as ids and
// every id present means each id has exactly one entry.
constexpr bool complete() {
  for (size_t i = 0; i < kFindingIdCount; ++i) {
    const CatalogueEntry& e = kTable[i];
    if (e.id != static_cast<FindingId>(i) || e.meaning.empty() || e.raised_by.empty() ||
        e.severities[0].when.empty()) {
      return false;
    }
  }
  return true;
}
static_assert(kEntries == kFindingIdCount, "one catalogue entry per FindingId, no more");
static_assert(complete(), "every FindingId needs its catalogue entry (meaning, raised_by, when)");

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::array<CatalogueEntry, kFindingIdCount>& catalogue() { return kTable; }

const CatalogueEntry& catalogue_entry(FindingId id) { return kTable.at(static_cast<size_t>(id)); }

std::vector<std::string_view> close_ids(std::string_view text, size_t max) {
  // Close: a third of the name may differ (typos, a word swapped for
  // another), or the text is part of the name ("firewall", "loss").
  std::vector<std::pair<size_t, std::string_view>> scored;
  for (const auto& [id, name] : EnumNames<FindingId>::table) {
    const size_t d = edit_distance(text, name);
    const bool part = text.size() >= 3 && name.find(text) != std::string_view::npos;
    if (part || d * 3 <= std::max(text.size(), name.size())) {
      scored.emplace_back(part ? std::min(d, name.size() - text.size()) : d, name);
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string_view> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace rdmacheck
