#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "findings/catalogue.h"
#include "output/print.h"

namespace rdmacheck::cli {
namespace {

// "did you mean a, b or c?", or "" when nothing is close.
std::string suggestion(const std::vector<std::string_view>& near) {
  std::string s;
  for (size_t i = 0; i < near.size(); ++i) {
    s += i == 0 ? "" : i + 1 == near.size() ? " or " : ", ";
    s += near[i];
  }
  return s.empty() ? s : "; did you mean " + s + "?";
}

}  // namespace

Runner attach_explain(CLI::App& app) {
  struct Opts {
    OutputFlags out;
    std::string id;
    bool markdown = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("id", o->id, "a finding id as rdmacheck prints it, e.g. firewall-blocks-roce");
  add_output_flags(app, o->out, "print the entry (or, without ID, every entry) as JSON");
  // The build's docs/findings.md (tests/docs_findings_current); not for users.
  app.add_flag("--markdown", o->markdown, "print the whole catalogue as Markdown")->group("");
  app.footer(
      "Prints what a finding means, the severities it can carry and when, the evidence it\n"
      "rests on and the fix, like 'rustc --explain'. Without ID, lists every id.\n"
      "Exit status: 0, or 2 when ID is no finding rdmacheck knows.");
  return [o]() {
    if (o->markdown) {
      std::fputs(catalogue_markdown().c_str(), stdout);
      return 0;
    }
    ExplainReport r;
    if (o->id.empty()) {
      r.listing = true;
      for (const auto& e : catalogue()) r.entries.push_back(&e);
    } else if (auto id = parse_enum<FindingId>(o->id)) {
      r.entries.push_back(&catalogue_entry(*id));
    } else {
      std::fprintf(stderr,
                   "rdmacheck explain: no finding is called '%s'%s ('rdmacheck explain' "
                   "lists them all)\n",
                   o->id.c_str(), suggestion(close_ids(o->id)).c_str());
      return 2;
    }
    o->out.text_header = false;  // the catalogue is the same on every machine
    return print(r, o->out) ? 0 : 2;
  };
}

}  // namespace rdmacheck::cli
