// The one printer every command calls: a report becomes its JSON document
// (--json) or its text, found by argument-dependent lookup of the report
// module's to_json(R) and format_text(R, TextStyle). Commands never format.
// --json-file also writes the document to a file, whatever stdout shows.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "base/result.h"
#include "base/text_style.h"

namespace rdmacheck::cli {

struct OutputFlags {
  bool json = false;
  bool no_color = false;
  std::string json_file;  // --json-file: the JSON document also goes here ("" = nowhere)
};

// --json (help names what is printed), --json-file FILE (perftest's
// --out_json_file; its directory is checked while parsing, before any work)
// and, where the text has colour, --no-color.
void add_output_flags(CLI::App& app, OutputFlags& out, const std::string& json_help,
                      bool has_color = false);

// Colour only when asked for and stdout is a terminal.
TextStyle text_style(const OutputFlags& out);

// A validator for options that name a file we will write: its directory
// exists and is writable (checked while parsing, before any work).
CLI::Validator file_in_writable_dir();

// Writes CONTENT to PATH through a temporary file in the same directory and a
// rename, so a reader never sees half a document.
Status write_file_atomically(const std::string& path, const std::string& content);

// One line on stderr when the file could not be written; false then.
bool write_json_file(const nlohmann::json& doc, const OutputFlags& out);

// False when --json-file could not be written (the command then exits 2).
template <class Report>
[[nodiscard]] bool print(const Report& r, const OutputFlags& out) {
  const bool file_ok = out.json_file.empty() || write_json_file(to_json(r), out);
  if (out.json) {
    std::fputs((to_json(r).dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(format_text(r, text_style(out)).c_str(), stdout);
  }
  std::fflush(stdout);
  return file_ok;
}

}  // namespace rdmacheck::cli
