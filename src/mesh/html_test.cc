// mesh --html over a real mesh document: a 4-host lab run in default mode
// with RoCE dropped between h2 and h4 (tests/fixtures/README.md says
// how it was captured). The page is held to what it embeds, and drawn in
// headless Chromium as check's page is: no console errors, both heatmaps
// with a cell per direction of every pair, the firewalled pair marked.
#include "mesh/html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/subprocess.h"
#include "host/ticket.h"
#include "testing/temp_dir.h"

namespace rdmacheck::mesh {
namespace {

nlohmann::json fixture() {
  std::ifstream f(RDMACHECK_FIXTURES "/mesh/lab-4hosts-firewall-h2-h4.json");
  return nlohmann::json::parse(f);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The JSON between the page's #report-data tags.
nlohmann::json embedded(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const auto at = page.find(open);
  if (at == std::string::npos) return nullptr;
  const auto from = at + open.size();
  return nlohmann::json::parse(page.substr(from, page.find("</script>", from) - from));
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

TEST(MeshHtml, TheFixtureIsTheFirewalledLabRun) {
  const auto doc = fixture();
  ASSERT_EQ(doc["hosts"], nlohmann::json({"h1", "h2", "h3", "h4"}));
  EXPECT_EQ(doc["mode"], "default");
  EXPECT_EQ(doc["matrices"]["failed"][1][3], true);
  EXPECT_EQ(doc["matrices"]["failed"][3][1], true);
  std::vector<std::string> ids;
  for (const auto& f : doc["findings"])
    ids.push_back(f["id"].get<std::string>() + "@" + f["subject"].get<std::string>());
  // The firewalled pair, and (seen in this run under a loaded host) the next
  // round's bandwidth test from each of its hosts timing out.
  EXPECT_EQ(ids, (std::vector<std::string>{"mesh-bad-pair@h1-h2", "mesh-unreachable-pair@h2-h4",
                                           "mesh-bad-pair@h3-h4"}));
  EXPECT_TRUE(doc["matrices"]["bandwidth_gbps"][0][1].is_number());
}

TEST(MeshHtml, ThePageEmbedsTheDocumentWholeAndFetchesNothing) {
  const auto doc = fixture();
  const auto page = render_html(doc);
  EXPECT_EQ(embedded(page), doc);
  EXPECT_NE(page.find("<title>rdmacheck mesh, 4 hosts</title>"), std::string::npos);
  EXPECT_NE(page.find("heatmap("), std::string::npos) << "the page script is inlined";
  for (const char* remote : {"src=\"http", "href=\"http", "src=\"//", "@import", "fetch("}) {
    EXPECT_EQ(page.find(remote), std::string::npos) << remote;
  }
}

TEST(MeshHtml, AHostNameCannotCloseTheScript) {
  auto doc = fixture();
  doc["hosts"][0] = "h1</script><script>alert(1)</script><!--";
  const auto page = render_html(doc);
  EXPECT_EQ(count(page, "</script>"), 3) << "the libraries, the data and the page script";
  EXPECT_EQ(embedded(page), doc);
}

TEST(MeshHtml, WriteSaysWhyAFileCannotBeWritten) {
  const auto dir = test_util::make_temp_dir("mesh-html");
  ASSERT_TRUE(write_html((dir / "mesh.html").string(), fixture()));
  EXPECT_EQ(read(dir / "mesh.html"), render_html(fixture()));
  const auto s = write_html((dir / "no-such-dir" / "mesh.html").string(), fixture());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("no-such-dir/mesh.html"), std::string::npos)
      << s.error().message();
  std::filesystem::remove_all(dir);
}

// What headless Chromium made of the page: its DOM after the script ran,
// and its console.
struct Drawn {
  std::string dom, console;
};

Drawn draw(const nlohmann::json& doc, const std::filesystem::path& dir) {
  EXPECT_TRUE(write_html((dir / "mesh.html").string(), doc));
  const std::string cmd =
      "chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --user-data-dir=" +
      (dir / "profile").string() + " --enable-logging=stderr --v=0 --dump-dom file://" +
      (dir / "mesh.html").string() + " 2>" + (dir / "console.txt").string();
  auto r = run_capture({"sh", "-c", cmd}, std::chrono::seconds(60));
  EXPECT_TRUE(r) << r.error().message();
  return {r ? r->out : "", read(dir / "console.txt")};
}

TEST(MeshHtml, ChromiumDrawsBothHeatmapsAndMarksTheFirewalledPair) {
  const auto dir = test_util::make_temp_dir("mesh-html");
  // The fixture predates the ticket header on mesh documents: give it the
  // one rdmacheck-mesh adds (src/mesh/main.cc).
  const auto doc = with_ticket(fixture(), TicketHeader{.version = "0.1.0",
                                                       .kernel = "6.1.0-57-amd64",
                                                       .rdma_core = "44.0",
                                                       .timestamp = "2026-12-01T14:34:10Z",
                                                       .command_line = "rdmacheck mesh --json"});
  const auto d = draw(doc, dir);
  EXPECT_EQ(d.console.find("CONSOLE"), std::string::npos) << d.console;
  // Two heatmaps of 4 x 3 directions; h2 <-> h4 failed both ways in both.
  EXPECT_NE(d.dom.find("data-cells=\"24\""), std::string::npos) << d.dom.substr(0, 3000);
  EXPECT_NE(d.dom.find("data-failed-cells=\"4\""), std::string::npos);
  EXPECT_EQ(count(d.dom, "<td class=\"cell failed\""), 4);
  EXPECT_EQ(count(d.dom, "class=\"heatmap\""), 2);
  EXPECT_NE(d.dom.find("title=\"h2 → h4: failed at "), std::string::npos);
  EXPECT_NE(d.dom.find("title=\"h4 → h2: failed at "), std::string::npos);
  EXPECT_NE(d.dom.find("data-from=\"h2\" data-to=\"h4\">FAIL<"), std::string::npos);
  // A healthy cell names its pair, figure and direction.
  EXPECT_NE(d.dom.find("title=\"h1 → h2: least RC round trip "), std::string::npos);
  EXPECT_NE(d.dom.find("title=\"h1 → h2: RDMA WRITE "), std::string::npos);
  EXPECT_NE(d.dom.find("FAIL mesh-unreachable-pair"), std::string::npos);
  EXPECT_NE(d.dom.find("command: <code>rdmacheck mesh --json</code>"), std::string::npos);
  EXPECT_NE(d.dom.find("rdma-core 44.0"), std::string::npos);
  // A bandwidth test that failed on a connected pair is "not measured", with why.
  EXPECT_NE(d.dom.find("title=\"h2 → h1: not measured: bandwidth run: Connection timed out"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(MeshHtml, ChromiumDrawsAQuickMeshWithoutTheBandwidthMap) {
  auto doc = fixture();
  doc["mode"] = "quick";
  const auto dir = test_util::make_temp_dir("mesh-html");
  const auto d = draw(doc, dir);
  EXPECT_EQ(d.console.find("CONSOLE"), std::string::npos) << d.console;
  EXPECT_NE(d.dom.find("data-cells=\"12\""), std::string::npos) << d.dom.substr(0, 3000);
  EXPECT_EQ(count(d.dom, "class=\"heatmap\""), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmacheck::mesh
