#include "output/usage.h"

#include <cctype>
#include <cstdio>

#include "host/ticket.h"

namespace rdmacheck {
namespace {

std::string g_command_line;  // written once by main() before any command runs

CLI::Validator finite() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::string l;
        for (char c : v) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!l.empty() && (l[0] == '+' || l[0] == '-')) l.erase(0, 1);
        if (l == "nan" || l == "inf" || l == "infinity" || l.rfind("nan(", 0) == 0) {
          return "'" + v + "' is not a finite number";
        }
        return {};
      },
      "", "finite");
}

}  // namespace

std::string program_name(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent == nullptr ? app.get_name() : program_name(*parent) + " " + app.get_name();
}

int usage_error(const CLI::App& app, const std::string& why) {
  const std::string program = program_name(app);
  std::fprintf(stderr, "%s: %s (see '%s --help')\n", program.c_str(), why.c_str(), program.c_str());
  return 2;
}

void refuse_non_finite(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() > 0 && !opt->get_positional()) opt->check(finite());
  }
}

void record_command_line(int argc, const char* const* argv) {
  g_command_line = quote_command_line(argc, argv);
}

const std::string& command_line() { return g_command_line; }

}  // namespace rdmacheck
