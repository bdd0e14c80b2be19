// `check --html FILE`: one self-contained page that opens offline. The
// report's JSON document is embedded and rendered by the page itself, with
// Debian's Chart.js (libjs-chart.js) inlined for the charts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace rdmacheck::check {

constexpr const char* kChartJs = "/usr/share/javascript/chart.js/chart.min.js";

// One self-contained page, the shape of every rdmacheck report page: the
// common style plus EXTRA_STYLE, LIBRARIES' source inlined, DOC embedded as
// #report-data (ASCII, safe inside <script>) and PAGE_JS, which renders it
// into #main and names the page in #title. PAGE_JS runs in a function that
// already holds doc, $ (an element builder), main, section and table. Pure.
std::string self_contained_page(const std::string& title, const std::string& extra_style,
                                const std::string& libraries, const nlohmann::json& doc,
                                const std::string& page_js);
Status write_page(const std::string& path, const std::string& page);

// The page for a check report document (check::to_json). Pure; tested.
std::string render_html(const nlohmann::json& doc, const std::string& chartjs_source);
Status write_html(const std::string& path, const nlohmann::json& doc,
                  const std::string& chartjs_path = kChartJs);

}  // namespace rdmacheck::check
