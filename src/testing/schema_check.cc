#include "testing/schema_check.h"

#include <fmt/core.h>

namespace rdmacheck::perf {
namespace {

using nlohmann::json;

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  return false;
}

void check(const json& s, const json& v, const std::string& path, std::vector<std::string>& out) {
  if (auto t = s.find("type"); t != s.end()) {
    bool ok = false;
    if (t->is_string()) {
      ok = has_type(v, *t);
    } else {
      for (const auto& one : *t) ok = ok || has_type(v, one);
    }
    if (!ok) {
      out.push_back(fmt::format("{}: expected type {}, got {}", path, t->dump(), v.type_name()));
      return;
    }
  }
  if (auto e = s.find("enum"); e != s.end()) {
    bool ok = false;
    for (const auto& one : *e) ok = ok || one == v;
    if (!ok) out.push_back(fmt::format("{}: {} is not one of {}", path, v.dump(), e->dump()));
  }
  if (auto m = s.find("minimum");
      m != s.end() && v.is_number() && v.get<double>() < m->get<double>()) {
    out.push_back(fmt::format("{}: {} is below the minimum {}", path, v.dump(), m->dump()));
  }
  if (v.is_object()) {
    for (const auto& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) {
        out.push_back(fmt::format("{}: required '{}' is missing", path, r.get<std::string>()));
      }
    }
    const json props = s.value("properties", json::object());
    for (const auto& [k, x] : v.items()) {
      const std::string sub = path + "." + k;
      if (props.contains(k)) {
        check(props[k], x, sub, out);
      } else if (auto a = s.find("additionalProperties"); a != s.end()) {
        if (a->is_boolean() && !a->get<bool>()) {
          out.push_back(fmt::format("{}: not allowed here", sub));
        } else if (a->is_object()) {
          check(*a, x, sub, out);
        }
      }
    }
  }
  if (v.is_array()) {
    if (auto items = s.find("items"); items != s.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        check(*items, v[i], fmt::format("{}[{}]", path, i), out);
      }
    }
  }
}

}  // namespace

std::vector<std::string> schema_violations(const json& schema, const json& doc) {
  std::vector<std::string> out;
  check(schema, doc, "$", out);
  return out;
}

}  // namespace rdmacheck::perf
