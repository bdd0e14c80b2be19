#include "output/print.h"

#include <unistd.h>

#include <cstdio>

#include "base/writable.h"

namespace rdmacheck {

CLI::Validator file_in_writable_dir() { return CLI::Validator(writable_file_problem, "FILE"); }

void add_output_flags(CLI::App& app, OutputFlags& out, const std::string& json_help, bool has_color,
                      FileCheck check) {
  app.add_flag("-j,--json", out.json, json_help + " (-j as iproute2's)");
  auto* file = app.add_option("--json-file,--out_json_file,--out-json-file", out.json_file,
                              "also write the JSON document to FILE (replaced atomically); the "
                              "text still goes to stdout (perftest's --out_json_file)");
  if (check == FileCheck::kWhileParsing) file->check(file_in_writable_dir());
  if (has_color) app.add_flag("--no-color", out.no_color, "no colour even on a terminal");
}

TextStyle text_style(const OutputFlags& out) {
  return TextStyle{.color = !out.json && !out.no_color && ::isatty(STDOUT_FILENO) != 0,
                   .detail = out.detail};
}

TicketHeader ticket_header(const OutputFlags& out, const std::vector<std::string>& devices) {
  return read_ticket_header(FsRoot(out.root), {.rdma_core = loaded_rdma_core_version(),
                                               .command_line = command_line(),
                                               .now = std::chrono::system_clock::now(),
                                               .devices = devices});
}

bool write_json_file(const nlohmann::json& doc, const OutputFlags& out) {
  if (auto s = write_file_atomically(out.json_file, doc.dump(2) + "\n"); !s) {
    const std::string sub = doc.is_object() ? doc.value("command", std::string()) : std::string();
    std::fprintf(stderr, "rdmacheck%s%s: --json-file: %s\n", sub.empty() ? "" : " ", sub.c_str(),
                 s.error().message().c_str());
    return false;
  }
  return true;
}

}  // namespace rdmacheck
