// The one printer every command calls: a report becomes its JSON document
// (--json) or its text, found by argument-dependent lookup of the report
// module's to_json(R) and format_text(R, TextStyle). Commands never format.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "base/text_style.h"

namespace rdmacheck::cli {

struct OutputFlags {
  bool json = false;
  bool no_color = false;
};

// --json (help names what is printed) and, where the text has colour, --no-color.
void add_output_flags(CLI::App& app, OutputFlags& out, const std::string& json_help,
                      bool has_color = false);

// Colour only when asked for and stdout is a terminal.
TextStyle text_style(const OutputFlags& out);

template <class Report>
void print(const Report& r, const OutputFlags& out) {
  if (out.json) {
    std::fputs((to_json(r).dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(format_text(r, text_style(out)).c_str(), stdout);
  }
  std::fflush(stdout);
}

}  // namespace rdmacheck::cli
