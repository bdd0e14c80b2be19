#include "testing/check_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace rdmacheck::test_util {
namespace {
using nlohmann::json;

// A chart needs this many pixels of a series' colour to count as drawn: a
// bar a few pixels high, a line's points, a dashed line's dashes.
constexpr size_t kMinPixels = 20;

// The text of the element whose id is `id`, up to the first `end` after it.
std::string element(const std::string& dom, const std::string& id, const std::string& end) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  const size_t stop = dom.find(end, at);
  return dom.substr(at, stop == std::string::npos ? std::string::npos : stop - at);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos) return {};
  const size_t from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1) {
    out.push_back(s.substr(from, at - from));
  }
  out.push_back(s.substr(from));
  return out;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  }
  return out;
}

struct Chart {
  std::map<std::string, std::string> series;  // name -> #rrggbb
  std::vector<std::string> x_ticks;
  Rect rect;
};

// What a canvas says it drew, or nullopt when the page has no such chart.
std::optional<Chart> chart(const std::string& dom, const std::string& name) {
  const std::string tag = element(dom, "chart-" + name, ">");
  if (tag.empty()) return std::nullopt;
  Chart c;
  for (const auto& s : split(attribute(tag, "data-series"), ',')) {
    const size_t eq = s.find('=');
    c.series[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
  }
  c.x_ticks = split(attribute(tag, "data-x-ticks"), '|');
  const auto r = split(attribute(tag, "data-rect"), ',');
  if (r.size() == 4) c.rect = {std::stoi(r[0]), std::stoi(r[1]), std::stoi(r[2]), std::stoi(r[3])};
  return c;
}

std::vector<std::string> size_labels(const std::set<uint64_t>& sizes) {
  std::vector<std::string> out;
  out.reserve(sizes.size());
  for (auto s : sizes) out.push_back(size_label(s));
  return out;
}

// Each of the chart's series has a colour of its own, drawn inside the chart.
void check_pixels(const std::string& name, const Chart& c, const Image& shot,
                  std::vector<std::string>& problems) {
  std::set<std::string> colours;
  std::vector<std::string> list;
  for (const auto& [series, colour] : c.series) {
    if (!colours.insert(colour).second) {
      problems.push_back(fmt::format("{} chart: {} shares its colour {}", name, series, colour));
    }
    list.push_back(colour);
  }
  if (c.rect.y + c.rect.h > kPageHeight || c.rect.w <= 0) {
    problems.push_back(fmt::format("{} chart at y {} height {}: outside the screenshot", name,
                                   c.rect.y, c.rect.h));
    return;
  }
  const auto counts = count_colours(shot, c.rect, list);
  for (const auto& [series, colour] : c.series) {
    const size_t n = counts.at(colour);
    if (n < kMinPixels) {
      problems.push_back(fmt::format("{} chart: {} pixels of {}'s colour {} in the screenshot",
                                     name, n, series, colour));
    }
  }
}

// The chart called name, its x axis naming `sizes` in bytes (when given) and
// its series drawn; nullopt (and a problem) when the page has no such chart.
std::optional<Chart> drawn(const std::string& dom, const std::string& name,
                           const std::set<uint64_t>* sizes, const Image& shot,
                           std::vector<std::string>& problems) {
  auto c = chart(dom, name);
  if (!c) {
    problems.push_back("no " + name + " chart");
    return c;
  }
  if (sizes && c->x_ticks != size_labels(*sizes)) {
    problems.push_back(name + " chart's x axis: " + fmt::format("{}", fmt::join(c->x_ticks, "|")));
  }
  check_pixels(name, *c, shot, problems);
  return c;
}

void expect_rows(const std::string& dom, const std::string& table, const std::string& cls,
                 size_t want, std::vector<std::string>& problems) {
  const std::string t = element(dom, table, "</table>");
  const size_t got = count(t, "<tr class=\"" + cls + "\">");
  if (got != want) {
    problems.push_back(fmt::format("#{}: {} rows of class {}, want {}", table, got, cls, want));
  }
}

}  // namespace

std::string size_label(uint64_t n) {
  if (n >= (1u << 20) && n % (1u << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} B", n);
}

std::vector<std::string> check_page_problems(const json& doc, const Page& page) {
  std::vector<std::string> problems;
  const std::string& dom = page.dom;
  for (const auto& line : split(page.console, '\n')) {
    if (line.find("CONSOLE") != std::string::npos) problems.push_back("console: " + line);
  }
  const char* verdicts[] = {"pass", "warn", "fail"};
  if (dom.find("class=\"verdict " + std::string(verdicts[doc["exit_status"].get<int>()]) + "\"") ==
      std::string::npos) {
    problems.push_back("no verdict for exit status " + doc["exit_status"].dump());
  }

  // The ticket header.
  const std::string ticket = element(dom, "ticket", "</table>");
  const json& t = doc["ticket"];
  for (const char* key : {"timestamp", "command_line", "version", "kernel", "rdma_core"}) {
    if (ticket.find(escaped(t[key].get<std::string>())) == std::string::npos) {
      problems.push_back(fmt::format("#ticket lacks the {} {}", key, t[key].dump()));
    }
  }

  // One row per number.
  size_t bw_rows = 0, lat_rows = 0;
  std::set<uint64_t> bw_sizes;
  std::vector<std::string> bw_ops, lat_ops;
  for (const auto& p : doc["perf"]) {
    const bool bw = p["command"] == "bw";
    (bw ? bw_rows : lat_rows) += p["results"].size();
    if (p["results"].empty()) continue;
    (bw ? bw_ops : lat_ops).push_back(p["spec"]["op"]);
    for (const auto& r : p["results"]) {
      if (bw) bw_sizes.insert(r["size"].get<uint64_t>());
    }
  }
  if (bw_rows) expect_rows(dom, "bw-results", "result", bw_rows, problems);
  if (lat_rows) expect_rows(dom, "lat-results", "result", lat_rows, problems);
  expect_rows(dom, "ping-rtts", "ping", doc["pings"].size(), problems);
  std::set<uint64_t> rungs;
  for (const auto& p : doc["pings"]) {
    for (const auto& r : p["ladder"]) rungs.insert(r["size"].get<uint64_t>());
  }
  if (!rungs.empty()) expect_rows(dom, "ladder", "rung", rungs.size(), problems);
  expect_rows(dom, "doctor-local", "check", doc["local_doctor"]["checks"].size(), problems);
  if (doc["peer_doctor"].is_array() && !doc["peer_doctor"].empty()) {
    expect_rows(dom, "doctor-peer", "finding-row", doc["peer_doctor"].size(), problems);
  }

  // The link's rate: the slower port of the two.
  double link = 0;
  for (const char* side : {"local", "peer"}) {
    const json& h = doc[side];
    if (!h.is_object() || h["rate_gbps"].get<double>() <= 0) continue;
    const double r = h["rate_gbps"].get<double>();
    link = link > 0 ? std::min(link, r) : r;
  }
  if (link > 0 && element(dom, "link-rate", "</p>").find(fmt::format("Link rate {} Gb/s", link)) ==
                      std::string::npos) {
    problems.push_back(fmt::format("no #link-rate saying {} Gb/s", link));
  }

  // The charts: bandwidth by size (bytes on the axis, one colour per
  // operation, the link's rate as a line), latency (the same colours).
  const auto shot = read_png(page.screenshot);
  if (!shot) {
    problems.push_back(shot.error().message());
    return problems;
  }
  std::map<std::string, std::string> op_colour;
  if (!bw_ops.empty()) {
    if (const auto c = drawn(dom, "bandwidth", &bw_sizes, *shot, problems)) {
      for (const auto& op : bw_ops) {
        if (!c->series.count(op)) problems.push_back("bandwidth chart has no " + op + " series");
        op_colour[op] = c->series.count(op) ? c->series.at(op) : "";
      }
      if (link > 0 && !c->series.count("link")) problems.push_back("no link-rate line");
    }
  }
  if (!lat_ops.empty()) {
    if (const auto c = drawn(dom, "latency", nullptr, *shot, problems)) {
      for (const auto& op : lat_ops) {
        if (!c->series.count(op)) {
          problems.push_back("latency chart has no " + op + " series");
        } else if (op_colour.count(op) && op_colour[op] != c->series.at(op)) {
          problems.push_back(op + " has another colour in the latency chart");
        }
      }
    }
  }
  if (!rungs.empty()) drawn(dom, "ladder", &rungs, *shot, problems);
  return problems;
}

}  // namespace rdmacheck::test_util
