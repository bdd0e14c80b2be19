// The command table: every subcommand is one entry {name, summary, attach}.
// attach() declares the subcommand's options on its CLI11 app (each option
// once, with help, default and validation) and returns the function that runs
// it. main() only builds the table into the parser and dispatches.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <functional>
#include <span>
#include <string>

#include "output/usage.h"  // usage_error, shared with rdmacheck-mesh

namespace rdmacheck::cli {

using Runner = std::function<int()>;

struct Command {
  const char* name;
  const char* summary;
  Runner (*attach)(CLI::App& app);
  bool hidden = false;  // not in --help (tools for packaging, such as completion)
};

std::span<const Command> commands();

Runner attach_check(CLI::App& app);
Runner attach_devices(CLI::App& app);
Runner attach_doctor(CLI::App& app);
Runner attach_qps(CLI::App& app);
Runner attach_serve(CLI::App& app);
Runner attach_ping(CLI::App& app);
Runner attach_bw(CLI::App& app);
Runner attach_lat(CLI::App& app);
Runner attach_lab(CLI::App& app);
Runner attach_mesh(CLI::App& app);
Runner attach_monitor(CLI::App& app);
Runner attach_completion(CLI::App& app);
Runner attach_perftest_flags(CLI::App& app);  // perftest_flags.cc
Runner attach_explain(CLI::App& app);
Runner attach_keygen(CLI::App& app);

// rdmacheck-mesh, beside this binary: `mesh` runs it, and its options are its
// own (completion reads them from its --help).
std::string mesh_program();

// Set by SIGINT/SIGTERM; long-running commands poll it.
const std::atomic<bool>& stop_requested();
void install_signal_handlers();

}  // namespace rdmacheck::cli
