// perftest's flags, one table: what each means here, or why it is not
// offered. It gives the one-line hint for a perftest flag rdmacheck does not
// take, and the markdown of docs/perftest-flags.md (the hidden
// `perftest-flags` command prints it; a ctest fails when the file is stale).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rdmacheck::cli {

struct PerftestFlag {
  std::string_view perftest;  // its spellings, as perftest 4.5 takes them: "-e --events"
  std::string_view here;      // rdmacheck's equivalent; "" = not offered
  std::string_view note;      // the difference, or why not
};

std::span<const PerftestFlag> perftest_flags();

// The hint for ARG ("--use_cuda=0", "-e") when it is one of perftest's flags
// that bw/lat do not take; nullopt otherwise.
std::optional<std::string> perftest_hint(std::string_view arg);

// docs/perftest-flags.md.
std::string perftest_flags_markdown();

}  // namespace rdmacheck::cli
