// rdmacheck: proves an RDMA link layer by layer. main() only dispatches.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "base/version.h"
#include "cli/command.h"

namespace {

int run(int argc, char** argv) {
  using rdmacheck::cli::Runner;
  rdmacheck::cli::record_command_line(argc, argv);
  CLI::App app{
      "rdmacheck: find out whether an RDMA link works, layer by layer (device, connection, "
      "performance), and why not.\n"};
  // "rdmacheck 0.1.0": the program's name first, as help2man and packagers expect.
  const std::string version = std::string("rdmacheck ") + rdmacheck::kVersionString;
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  app.footer(
      "Run 'rdmacheck COMMAND --help' for a command's options.\n"
      "Exit status: 0 healthy, 1 warnings, 2 failures or bad usage.");
  std::map<std::string, Runner> runners;
  for (const auto& c : rdmacheck::cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    if (c.hidden) sub->group("");
    sub->set_version_flag("-V,--version", version);  // as perftest's -V
    runners[c.name] = c.attach(*sub);
  }
  if (argc > 1 && argv[1][0] != '-' && runners.count(argv[1]) == 0) {
    std::fprintf(stderr, "rdmacheck: error: unknown command '%s' (see 'rdmacheck --help')\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the help that lists the option: the subcommand's, when there is one.
    const bool sub = argc > 1 && runners.count(argv[1]) != 0;
    std::fprintf(stderr, "rdmacheck: error: %s (see 'rdmacheck %s--help')\n", e.what(),
                 sub ? (std::string(argv[1]) + " ").c_str() : "");
    return 2;
  }
  rdmacheck::cli::install_signal_handlers();
  for (const auto* sub : app.get_subcommands()) {
    return runners.at(sub->get_name())();
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmacheck: internal error: %s\n", e.what());
    return 2;
  }
}
