#include "check/html.h"

#include <fmt/core.h>

#include <fstream>
#include <sstream>

#include "report_js.h"

namespace rdmacheck::check {
namespace {

// Script source placed inside <script> must not close it early.
std::string script_safe(std::string s) {
  for (size_t at = 0; (at = s.find("</", at)) != std::string::npos; at += 3)
    s.replace(at, 2, "<\\/");
  for (size_t at = 0; (at = s.find("<!--", at)) != std::string::npos; at += 5)
    s.replace(at, 4, "<\\!--");
  return s;
}

// A JSON document inside <script>: outside its strings JSON has no '<', and
// inside them \u003c is the same character, so nothing in it can close the
// script or open a comment, and it still parses as JSON (an escape like <\! would not).
std::string json_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

constexpr const char* kStyle = R"CSS(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.5em; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: .2em .6em; text-align: left; }
.st { font-weight: bold; } .st.pass { color: #1a7f37; } .st.warn { color: #9a6700; } .st.fail { color: #cf222e; } .st.not_run { color: #777; }
.finding { margin: .6em 0; padding: .4em .6em; border-left: 4px solid #999; background: #f6f8fa; }
.finding.fail { border-color: #cf222e; } .finding.warn { border-color: #9a6700; } .finding.info { border-color: #0969da; }
.ev, .fix { font-family: monospace; font-size: .9em; margin-left: 1em; } .chart { margin: .5em 0 1.5em; }
)CSS";

// What every page script starts from: the embedded document, an element
// builder, a titled section appended to #main, and a table of rows.
constexpr const char* kPageHelpers = R"JS(
  const doc = JSON.parse(document.getElementById('report-data').textContent);
  const $ = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  };
  const main = document.getElementById('main');
  const section = (title) => { const s = $('section', {}, $('h2', {}, title)); main.append(s); return s; };
  const table = (head, rows) => $('table', {}, $('tr', {}, ...head.map((h) => $('th', {}, h))),
      ...rows.map((r) => $('tr', {}, ...r.map((c) => $('td', {}, c ?? '')))));
)JS";

}  // namespace

std::string self_contained_page(const std::string& title, const std::string& extra_style,
                                const std::string& libraries, const nlohmann::json& doc,
                                const std::string& page_js) {
  // ensure_ascii keeps the embedded document plain ASCII whatever the hosts reported.
  const std::string data = json_safe(doc.dump(-1, ' ', true));
  return fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>{}</title>\n<style>{}{}</style>\n<script>{}</script>\n</head>\n"
      "<body><h1 id=\"title\">rdmacheck</h1><main id=\"main\"></main>\n"
      "<script type=\"application/json\" id=\"report-data\">{}</script>\n"
      "<script>(function () {{{}{}}})();</script>\n</body></html>\n",
      title, kStyle, extra_style, script_safe(libraries), data, kPageHelpers, page_js);
}

Status write_page(const std::string& path, const std::string& page) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return errno_error("open", path);
  out << page;
  out.close();
  if (!out) return errno_error("write", path);
  return ok_status();
}

std::string render_html(const nlohmann::json& doc, const std::string& chartjs_source) {
  return self_contained_page("rdmacheck check " + doc.value("host", ""), "", chartjs_source, doc,
                             kReportJs);
}

Status write_html(const std::string& path, const nlohmann::json& doc,
                  const std::string& chartjs_path) {
  std::ifstream js(chartjs_path, std::ios::binary);
  if (!js) {
    return Error{"open", errno, chartjs_path + " (install Debian's libjs-chart.js for --html)"};
  }
  std::ostringstream chart;
  chart << js.rdbuf();
  return write_page(path, render_html(doc, chart.str()));
}

}  // namespace rdmacheck::check
