#include "mesh/html.h"

#include "check/html.h"
#include "mesh_report_js.h"

namespace rdmacheck::mesh {
namespace {

constexpr const char* kHeatmapStyle = R"CSS(
main { max-width: 75em; } .heatmap td, .heatmap th { text-align: center; min-width: 4.5em; }
.heatmap th.corner { font-weight: normal; font-size: .8em; color: #555; }
.heatmap td.self { background: #eee; }
.heatmap td.failed, .key.failed { background: repeating-linear-gradient(45deg, #5a0d12, #5a0d12 4px, #8c1a22 4px, #8c1a22 8px); color: #fff; font-weight: bold; }
.heatmap td.none, .key.none { background: #fff; color: #777; }
.key { padding: .1em .5em; border: 1px solid #ccc; } .legend { font-size: .9em; }
.bar { height: .8em; background: #0969da; }
)CSS";

}  // namespace

std::string render_html(const nlohmann::json& doc) {
  return check::self_contained_page(
      "rdmacheck mesh, " + std::to_string(doc.value("hosts", nlohmann::json::array()).size()) +
          " hosts",
      kHeatmapStyle, "", doc, kMeshReportJs);
}

Status write_html(const std::string& path, const nlohmann::json& doc) {
  return check::write_page(path, render_html(doc));
}

}  // namespace rdmacheck::mesh
