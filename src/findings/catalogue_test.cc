#include "findings/catalogue.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace rdmacheck {
namespace {

// Completeness is a static_assert in catalogue.cc; this holds the lookup
// and the words to what explain and the docs promise.
TEST(Catalogue, EveryIdLooksUpItsOwnEntryWithWords) {
  std::set<std::string_view> names;
  for (const auto& [id, name] : EnumNames<FindingId>::table) {
    const CatalogueEntry& e = catalogue_entry(id);
    EXPECT_EQ(e.id, id) << name;
    EXPECT_FALSE(e.meaning.empty()) << name;
    EXPECT_FALSE(e.severities[0].when.empty()) << name;
    // Unused severity rows come last, and no severity is told twice.
    std::set<Severity> seen;
    bool ended = false;
    for (const auto& s : e.severities) {
      if (s.when.empty()) {
        ended = true;
        continue;
      }
      EXPECT_FALSE(ended) << name << ": a severity after an unused row";
      EXPECT_TRUE(seen.insert(s.severity).second) << name << ": " << severity_name(s.severity);
    }
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(names.size(), catalogue().size());
}

TEST(Catalogue, ParsesItsOwnNamesAndNothingElse) {
  for (const auto& e : catalogue()) EXPECT_EQ(parse_enum<FindingId>(name_of(e.id)), e.id);
  EXPECT_FALSE(parse_enum<FindingId>("?").has_value());  // kForeign has no name
  EXPECT_FALSE(parse_enum<FindingId>("Firewall-Blocks-Roce").has_value());
}

TEST(Catalogue, CloseIdsFindTyposAndParts) {
  EXPECT_EQ(close_ids("firewall-block-roce").at(0), "firewall-blocks-roce");
  EXPECT_EQ(close_ids("mtu-blackhole").at(0), "mtu-black-hole");
  const auto fw = close_ids("firewall", 5);
  ASSERT_EQ(fw.size(), 3u);  // the three firewall-* ids, nearest first
  EXPECT_EQ(std::set<std::string_view>(fw.begin(), fw.end()),
            (std::set<std::string_view>{"firewall-unreadable", "firewall-blocks-roce",
                                        "firewall-blocks-some-roce"}));
  EXPECT_TRUE(close_ids("qwertyuiop").empty());
  EXPECT_LE(close_ids("port", 2).size(), 2u);
}

TEST(Catalogue, ExplainTextShowsTheEntry) {
  const ExplainReport r{{&catalogue_entry(FindingId::kFirewallBlocksSomeRoce)}, false};
  const std::string t = format_text(r, {});
  EXPECT_EQ(t.rfind("firewall-blocks-some-roce\n", 0), 0u) << t;
  for (const char* part : {"raised by: doctor", "  severity:\n    WARN doctor:", "    FAIL a test:",
                           "  evidence:\n", "  fix:\n    Exempt RoCE"}) {
    EXPECT_NE(t.find(part), std::string::npos) << part << "\n" << t;
  }
  for (size_t from = 0, nl; (nl = t.find('\n', from)) != std::string::npos; from = nl + 1) {
    EXPECT_LE(nl - from, 80u) << t.substr(from, nl - from);
  }
  // An entry without a fix says why there is none.
  const ExplainReport fact{{&catalogue_entry(FindingId::kVersionMismatch)}, false};
  EXPECT_NE(format_text(fact, {}).find("none: it states a fact"), std::string::npos);
}

TEST(Catalogue, ListingIsOneLinePerId) {
  ExplainReport r;
  r.listing = true;
  for (const auto& e : catalogue()) r.entries.push_back(&e);
  const std::string t = format_text(r, {});
  for (const auto& [id, name] : EnumNames<FindingId>::table) {
    EXPECT_TRUE(t.rfind(std::string(name) + " ", 0) == 0 ||
                t.find("\n" + std::string(name) + " ") != std::string::npos)
        << name;
  }
  // The meaning's first clause, after the ids padded to one column.
  EXPECT_NE(t.find("\nmtu-black-hole                  Something on the path drops large frames\n"),
            std::string::npos)
      << t;
  EXPECT_NE(
      t.find("\nport-down                       Nothing can be sent or received on this port\n"),
      std::string::npos)
      << t;
}

TEST(Catalogue, JsonCarriesEveryField) {
  const ExplainReport r{{&catalogue_entry(FindingId::kBandwidthBelowExpected)}, false};
  const auto j = to_json(r);
  ASSERT_EQ(j["findings"].size(), 1u);
  const auto& e = j["findings"][0];
  EXPECT_EQ(e["id"], "bandwidth-below-expected");
  ASSERT_EQ(e["severities"].size(), 2u);
  EXPECT_EQ(e["severities"][0]["severity"], "fail");
  EXPECT_EQ(e["severities"][1]["severity"], "warn");
  for (const char* k : {"raised_by", "meaning", "evidence", "fix"}) {
    EXPECT_TRUE(e[k].is_string()) << k;
  }
}

TEST(Catalogue, MarkdownHasAHeadingAndAnIndexRowPerId) {
  const std::string md = catalogue_markdown();
  for (const auto& [id, name] : EnumNames<FindingId>::table) {
    EXPECT_NE(md.find("\n## " + std::string(name) + "\n"), std::string::npos) << name;
    EXPECT_NE(md.find("| [`" + std::string(name) + "`](#" + std::string(name) + ") |"),
              std::string::npos)
        << name;
  }
}

}  // namespace
}  // namespace rdmacheck
