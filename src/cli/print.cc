#include "cli/print.h"

#include <unistd.h>

namespace rdmacheck::cli {

void add_output_flags(CLI::App& app, OutputFlags& out, const std::string& json_help,
                      bool has_color) {
  app.add_flag("--json", out.json, json_help);
  if (has_color) app.add_flag("--no-color", out.no_color, "no colour even on a terminal");
}

TextStyle text_style(const OutputFlags& out) {
  return TextStyle{.color = !out.json && !out.no_color && ::isatty(STDOUT_FILENO) != 0};
}

}  // namespace rdmacheck::cli
