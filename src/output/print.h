// The one printer every front end calls (rdmacheck's commands and
// rdmacheck-mesh): a report becomes its JSON document (--json) or its text,
// found by argument-dependent lookup of the report module's to_json(R) and
// format_text(R, TextStyle). Front ends never format. --json-file also writes
// the document to a file (temp + rename), whatever stdout shows.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "base/atomic_file.h"
#include "base/result.h"
#include "base/text_style.h"
#include "host/ticket.h"
#include "output/usage.h"

namespace rdmacheck {

struct OutputFlags {
  bool json = false;
  bool no_color = false;
  Detail detail = Detail::kNormal;  // set by a command's --brief or -v
  std::string json_file;            // --json-file: the JSON document also goes here ("" = nowhere)
  // Set by the command, not by flags: the machine the report describes (a
  // --root replay, else "/"), for the ticket header's kernel and devices; and
  // whether the text gets the header (not --output's bare figures).
  std::string root = "/";
  bool text_header = true;
};

// Where --json-file's directory is checked: while parsing, before any work
// (every command), or by the caller (rdmacheck-mesh: only rank 0 writes, so
// only its file system counts, and every rank must hear the one verdict).
enum class FileCheck { kWhileParsing, kByCaller };

// --json (help names what is printed), --json-file FILE (perftest's
// --out_json_file) and, where the text has colour, --no-color.
void add_output_flags(CLI::App& app, OutputFlags& out, const std::string& json_help,
                      bool has_color = false, FileCheck check = FileCheck::kWhileParsing);

// Colour only when asked for and stdout is a terminal.
TextStyle text_style(const OutputFlags& out);

// A validator for options that name a file we will write: its directory
// exists and is writable (checked while parsing, before any work).
CLI::Validator file_in_writable_dir();

// One line on stderr ("PROGRAM: --json-file: why") when the file could not
// be written; false then. PROGRAM: "rdmacheck COMMAND" from the document's
// "command".
bool write_json_file(const nlohmann::json& doc, const OutputFlags& out);

// The ticket header for a report that used DEVICES (empty: every device
// under out.root): this run's command line (record_command_line) and time,
// the machine's versions.
TicketHeader ticket_header(const OutputFlags& out, const std::vector<std::string>& devices);

// The devices a report used: its own ticket_devices(R) when its module has
// one (found by argument-dependent lookup), else none named (all are listed).
template <class Report>
std::vector<std::string> devices_of(const Report& r) {
  if constexpr (requires { ticket_devices(r); }) {
    return ticket_devices(r);
  } else {
    return {};
  }
}

// The exit status a report gives its command: its module's exit_status(R)
// (argument-dependent lookup) or its own r.exit_status(). Every printed
// document carries it under one key, "exit_status", with one meaning.
template <class Report>
int exit_status_of(const Report& r) {
  if constexpr (requires { exit_status(r); }) {
    return exit_status(r);
  } else {
    return r.exit_status();
  }
}

// A report's JSON document as every command prints it: to_json(R) with the
// schema_version, the ticket header T and the exit status beside its own keys.
template <class Report>
nlohmann::json document(const Report& r, const TicketHeader& t) {
  nlohmann::json doc = with_ticket(to_json(r), t);
  doc["exit_status"] = exit_status_of(r);
  return doc;
}

// False when --json-file could not be written (the command then exits 2).
// One ticket T for every form of the report (stdout, --json-file, --html):
// one run says one time everywhere.
template <class Report>
[[nodiscard]] bool print(const Report& r, const OutputFlags& out, const TicketHeader& t) {
  const nlohmann::json doc = document(r, t);
  const bool file_ok = out.json_file.empty() || write_json_file(doc, out);
  if (out.json) {
    std::fputs((doc.dump(2) + "\n").c_str(), stdout);
  } else {
    const std::string header = out.text_header ? format_text(t) : std::string();
    std::fputs((header + format_text(r, text_style(out))).c_str(), stdout);
  }
  std::fflush(stdout);
  return file_ok;
}

template <class Report>
[[nodiscard]] bool print(const Report& r, const OutputFlags& out) {
  return print(r, out, ticket_header(out, devices_of(r)));
}

}  // namespace rdmacheck
