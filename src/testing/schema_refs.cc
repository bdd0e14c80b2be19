#include "testing/schema_refs.h"

#include <fmt/core.h>

#include <fstream>
#include <vector>

namespace rdmacheck {
namespace {

using nlohmann::json;

constexpr int kMaxHops = 32;  // far beyond any chain of our schemas: a cycle

struct Ref {
  std::string doc;      // the document it points into
  std::string pointer;  // JSON pointer in it, "" for the whole document
};

Ref split(const std::string& ref, const std::string& from) {
  const auto hash = ref.find('#');
  const std::string doc = ref.substr(0, hash);
  return {doc.empty() ? from : doc, hash == std::string::npos ? "" : ref.substr(hash + 1)};
}

bool annotation(const std::string& key) {
  return key == "$ref" || key == "description" || key == "title" || key == "$comment";
}

class Inliner {
 public:
  explicit Inliner(const SchemaSet& set) : set_(set) {}

  // S, a part of document DOC, reached through HOPS references.
  Result<json> node(const json& s, const std::string& doc, int hops) const {
    if (s.is_object() && s.contains("$ref")) return follow(s, doc, hops);
    if (!s.is_structured()) return s;
    json out = s.is_object() ? json::object() : json::array();
    for (auto it = s.begin(); it != s.end(); ++it) {
      auto sub = node(*it, doc, hops);
      if (!sub) return sub.error();
      if (s.is_object()) {
        out[it.key()] = std::move(*sub);
      } else {
        out.push_back(std::move(*sub));
      }
    }
    return out;
  }

 private:
  Result<json> follow(const json& s, const std::string& doc, int hops) const {
    const json& r = s["$ref"];
    if (!r.is_string())
      return plain_error("$ref", fmt::format("{}: {} is not a string", doc, r.dump()));
    const std::string ref = r.get<std::string>();
    const auto fail = [&](const std::string& why) {
      return plain_error("$ref", fmt::format("{} in {}: {}", ref, doc, why));
    };
    for (const auto& [k, v] : s.items()) {
      if (!annotation(k)) return fail(fmt::format("'{}' beside $ref", k));
    }
    if (hops >= kMaxHops)
      return fail(fmt::format("more than {} references deep (a cycle)", kMaxHops));
    const Ref to = split(ref, doc);
    const auto d = set_.find(to.doc);
    if (d == set_.end()) return fail("no schema named " + to.doc);
    const json* target = nullptr;
    try {
      target = &d->second.at(json::json_pointer(to.pointer));
    } catch (const json::exception&) {
      return fail("nothing at " + (to.pointer.empty() ? "/" : to.pointer) + " of " + to.doc);
    }
    return node(*target, to.doc, hops + 1);
  }

  const SchemaSet& set_;
};

// The other documents S refers to.
void referenced_docs(const json& s, std::vector<std::string>& out) {
  if (s.is_object()) {
    if (auto r = s.find("$ref"); r != s.end() && r->is_string()) {
      const std::string doc = split(r->get<std::string>(), "").doc;
      if (!doc.empty()) out.push_back(doc);
    }
  }
  if (s.is_structured()) {
    for (const auto& v : s) referenced_docs(v, out);
  }
}

Result<json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return errno_error("open", path);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return plain_error("parse", path + ": not valid JSON");
  return j;
}

}  // namespace

Result<json> inline_refs(const SchemaSet& set, const std::string& name) {
  const auto d = set.find(name);
  if (d == set.end()) return plain_error("$ref", "no schema named " + name);
  return Inliner(set).node(d->second, name, 0);
}

Result<json> load_schema(const std::string& dir, const std::string& name) {
  SchemaSet set;
  std::vector<std::string> todo = {name};
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    if (set.contains(next)) continue;
    auto doc = read_json(dir + "/" + next);
    if (!doc) return doc.error();
    referenced_docs(*doc, todo);
    set.emplace(next, std::move(*doc));
  }
  return inline_refs(set, name);
}

}  // namespace rdmacheck
