// What every front end (rdmacheck's commands, rdmacheck-mesh) says about its
// own command line: usage errors in one form, the same refusal of NaN and
// infinity, and the command line as typed for the ticket header.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rdmacheck {

// "rdmacheck ping" for a subcommand, the app's own name ("rdmacheck mesh")
// for a program's root.
std::string program_name(const CLI::App& app);

// A bad command line found after parsing (options that contradict each
// other), or CLI11's own parse error: one line on stderr naming the
// program's --help, "PROGRAM: why (see 'PROGRAM --help')". Returns 2.
int usage_error(const CLI::App& app, const std::string& why);

// NaN and infinity pass every range check (each comparison is false): no
// option takes one, so every option of APP that takes a value refuses them.
void refuse_non_finite(CLI::App& app);

// The command line as the user typed it (for the ticket header): main()
// records it once, before any command runs (and before MPI_Init edits argv).
void record_command_line(int argc, const char* const* argv);
const std::string& command_line();

}  // namespace rdmacheck
