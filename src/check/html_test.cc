// check --html's page, rendered from a check document a lab guest printed
// (tests/fixtures/check/rxe-lab-check.json, see tests/fixtures/README.md) and
// opened in headless Chromium: what the page shows is read back from the DOM
// its script built and from the screenshot's pixels.
#include "check/html.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/check_page.h"
#include "testing/temp_dir.h"

namespace rdmacheck::check {
namespace {
using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json captured() { return json::parse(slurp(RDMACHECK_FIXTURES "/check/rxe-lab-check.json")); }

// The embedded document, as the page's script reads it.
json embedded(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t from = html.find(open) + open.size();
  std::string text = html.substr(from, html.find("</script>", from) - from);
  for (size_t at = 0; (at = text.find("<\\/", at)) != std::string::npos;) text.erase(at + 1, 1);
  for (size_t at = 0; (at = text.find("<\\!--", at)) != std::string::npos;) text.erase(at + 1, 1);
  return json::parse(text);
}

TEST(Html, EmbedsTheDocumentIntactEvenWhenItHoldsScriptText) {
  json doc = captured();
  doc["layers"][0]["findings"][0]["summary"] = "</script><script>alert(1)</script><!-- ü";
  const std::string html = render_html(doc, "/* chart.js */");
  EXPECT_EQ(embedded(html), doc);
  // Only the page's own three scripts close.
  size_t closes = 0;
  for (size_t at = html.find("</script>"); at != std::string::npos;
       at = html.find("</script>", at + 1))
    ++closes;
  EXPECT_EQ(closes, 3u);
  EXPECT_NE(html.find("<title>rdmacheck check h1</title>"), std::string::npos);
}

// One Chromium run (ctest runs each test in a process of its own): the page
// from the captured document, then the same checker shown to fail.
TEST(HtmlPage, ShowsEverythingTheCapturedCheckHoldsAndTheCheckerSeesWhatIsNot) {
  // A package build's chroot (debian/control) has neither; CI and the lab
  // tests do (scripts/setup).
  if (!std::filesystem::exists(kChartJs) || !std::filesystem::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "needs Debian's chromium and libjs-chart.js";
  }
  const json doc = captured();
  const auto dir = test_util::make_temp_dir("html");
  std::ofstream(dir / "report.html") << render_html(doc, slurp(kChartJs));
  const auto page = test_util::open_in_chromium(dir / "report.html");
  ASSERT_TRUE(page) << page.error().message();
  EXPECT_EQ(test_util::check_page_problems(doc, *page), std::vector<std::string>{});
  // What the capture holds, as the page must read it.
  EXPECT_NE(page->dom.find("data-x-ticks=\"64 KiB\""), std::string::npos);
  EXPECT_NE(page->dom.find("Link rate 2.5 Gb/s"), std::string::npos);
  // Its 64 KiB message rates (mpps 0.000112 and 0.000172) in the unit they reach 1 in;
  // the capture predates the intervals, so their cell is empty, not an error.
  EXPECT_NE(page->dom.find(">112 pps<"), std::string::npos);
  EXPECT_NE(page->dom.find(">172 pps<"), std::string::npos);
  EXPECT_EQ(page->console.find("TypeError"), std::string::npos) << page->console;

  {
    SCOPED_TRACE("a document with one more bandwidth size than the page shows");
    json more = doc;
    auto& results = more["perf"][0]["results"];
    results.push_back(results[0]);
    results[1]["size"] = 1 << 20;
    const auto problems = test_util::check_page_problems(more, *page);
    ASSERT_EQ(problems.size(), 2u) << testing::PrintToString(problems);
    EXPECT_EQ(problems[0], "#bw-results: 2 rows of class result, want 3");
    EXPECT_EQ(problems[1], "bandwidth chart's x axis: 64 KiB");
  }
  {
    SCOPED_TRACE("the bandwidth chart's place moved to the blank page corner");
    test_util::Page moved = *page;
    const size_t at = moved.dom.find("data-rect=\"", moved.dom.find("id=\"chart-bandwidth\""));
    moved.dom.replace(at, moved.dom.find('"', at + 11) - at + 1, "data-rect=\"0,0,20,20\"");
    const auto problems = test_util::check_page_problems(doc, moved);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(problems[0].find("bandwidth chart: 0 pixels of "), std::string::npos) << problems[0];
  }
}

}  // namespace
}  // namespace rdmacheck::check
