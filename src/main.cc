// rdmacheck: proves an RDMA link layer by layer. main() only dispatches.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <string>

#include "base/version.h"
#include "cli/command.h"
#include "cli/perftest_flags.h"
#include "output/usage.h"

namespace {

int run(int argc, char** argv) {
  using rdmacheck::cli::Runner;
  rdmacheck::record_command_line(argc, argv);
  CLI::App app{
      "rdmacheck: find out whether an RDMA link works, layer by layer (device, connection, "
      "performance), and why not.\n"};
  app.name("rdmacheck");  // not argv[0]'s path: usage errors and --help say "rdmacheck"
  // "rdmacheck 0.1.0": the program's name first, as help2man and packagers expect.
  const std::string version = std::string("rdmacheck ") + rdmacheck::kVersionString;
  app.set_version_flag("-V,--version", version);
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
    rdmacheck::refuse_non_finite(*sub);
  }
  if (argc > 1 && argv[1][0] != '-' && runners.count(argv[1]) == 0) {
    std::fprintf(stderr, "rdmacheck: unknown command '%s' (see 'rdmacheck --help')\n", argv[1]);
    return 2;
  }
  // bw/lat -s LIST: CLI11 drops an empty item ("4k,,8k") where a size was meant.
  for (int i = 2; i + 1 < argc && (std::string(argv[1]) == "bw" || std::string(argv[1]) == "lat");
       ++i) {
    const std::string flag = argv[i];
    const std::string list = flag == "-s" || flag == "--size" ? argv[i + 1] : "";
    if (!list.empty() &&
        (list.front() == ',' || list.back() == ',' || list.find(",,") != std::string::npos)) {
      std::fprintf(stderr,
                   "rdmacheck %s: --size: '%s' has an empty item (see 'rdmacheck %s --help')\n",
                   argv[1], list.c_str(), argv[1]);
      return 2;
    }
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
    // A perftest flag bw/lat do not take: its equivalent, or why not.
    const std::string name = sub ? argv[1] : "";
    for (int i = 2; (name == "bw" || name == "lat") && i < argc; ++i) {
      const std::string flag = std::string(argv[i]).substr(0, std::string(argv[i]).find('='));
      if (app.get_subcommand(name)->get_option_no_throw(flag) != nullptr) continue;
      if (auto hint = rdmacheck::cli::perftest_hint(argv[i])) {
        std::fprintf(stderr, "rdmacheck %s: %s (see docs/perftest-flags.md)\n", name.c_str(),
                     hint->c_str());
        return 2;
      }
    }
    // One prefix for every usage error: "rdmacheck SUB: ".
    std::fprintf(stderr, "rdmacheck%s: %s (see 'rdmacheck %s--help')\n",
                 sub ? (" " + name).c_str() : "", e.what(), sub ? (name + " ").c_str() : "");
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
