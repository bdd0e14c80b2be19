// `rdmacheck mesh --html FILE`: one self-contained page that opens offline
// (nothing fetched): the mesh's JSON document embedded and rendered by the
// page's own script as heatmaps (plain tables, so no chart library).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"

namespace rdmacheck::mesh {

// The page for a mesh document (to_json, with its ticket). Pure; tested.
std::string render_html(const nlohmann::json& doc);
Status write_html(const std::string& path, const nlohmann::json& doc);

}  // namespace rdmacheck::mesh
