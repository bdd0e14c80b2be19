// The README's hardware recipe, as written: its "On real hardware" commands
// (steps 2 to 4) are read from README.md itself and run between two guests,
// h1 as A and h2 as B, so a change to the README that breaks the recipe
// fails here. The glue around them is the lab's, never the recipe's: the
// guests' /etc (the host's, read-only) becomes writable through an overlay,
// the server goes to the background with its log kept, and B waits for A to
// listen. Step 1 (installing) is the lab's own binary.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "lab/lab_harness.h"

namespace rdmacheck::labtest {
namespace {

struct RecipeLine {
  std::string host;  // "A", "B" or "A and B"
  std::string command;
};

// The shell lines of the README's steps 2-4: a line's host from its "# on
// ..." comment, else its step's ("on A" in the step's heading).
std::vector<RecipeLine> recipe_lines(const std::string& readme) {
  std::vector<RecipeLine> out;
  const auto from = readme.find("**2. ");
  const auto to = readme.find("### A healthy check");
  if (from == std::string::npos || to == std::string::npos || to < from) return out;
  std::istringstream in(readme.substr(from, to - from));
  std::string line;
  std::string step_host;
  bool in_block = false;
  const std::regex on(R"(#\s*on (A and on B|A|B)\b)");
  const std::regex heading_on(R"(\bon (A|B)\b)");
  while (std::getline(in, line)) {
    if (line.rfind("**", 0) == 0) {  // "**2. Make B a key on A and copy it to B.**"
      std::smatch m;
      step_host = std::regex_search(line, m, heading_on) ? m[1].str() : "";
    }
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block || line.empty()) continue;
    std::smatch m;
    std::string host = step_host;
    std::string command = line;
    if (std::regex_search(line, m, on)) {
      host = m[1].str() == "A and on B" ? "A and B" : m[1].str();
      command = line.substr(0, static_cast<size_t>(m.position(0)));
    }
    while (!command.empty() && command.back() == ' ') command.pop_back();
    out.push_back({host, command});
  }
  return out;
}

// A and B become h1 and h2 where they stand as words ("/tmp/B.key" too).
std::string in_the_lab(const std::string& command) {
  return std::regex_replace(std::regex_replace(command, std::regex(R"(\bA\b)"), "h1"),
                            std::regex(R"(\bB\b)"), "h2");
}

std::string read_readme() {
  std::ifstream f(RDMACHECK_README);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ReadmeRecipeLab, TheHardwareRecipeAsWrittenEndsInAPassingCheck) {
  const auto lines = recipe_lines(read_readme());
  // The recipe as the README has it today: a change to its shape is a change here.
  ASSERT_EQ(lines.size(), 6u) << "README.md's steps 2-4 changed shape";
  const char* etc =
      "mkdir -p /run/etc-up /run/etc-work && mount -t overlay etc -o "
      "lowerdir=/etc,upperdir=/run/etc-up,workdir=/run/etc-work /etc && mount --bind "
      "/run/lab/hosts /etc/hosts";
  std::vector<std::string> args = {"--ssh",
                                   "--fault",
                                   "no-server",
                                   "--setup",
                                   std::string("h1:") + etc,
                                   "--setup",
                                   std::string("h2:") + etc};
  size_t check_run = 0;
  size_t h2_runs = 0;
  for (const auto& l : lines) {
    std::string cmd = in_the_lab(l.command);
    if (cmd.find("rdmacheck serve ") == 0) {  // runs until stopped: in the background
      cmd +=
          " > /run/serve.log 2>&1 & until grep -q listening /run/serve.log; do sleep 0.1; "
          "done; touch /run/lab/h1/recipe-serving";
    } else if (cmd.find("rdmacheck check ") == 0) {
      cmd = "until [ -e /run/lab/h1/recipe-serving ]; do sleep 0.1; done; " + cmd;
      check_run = h2_runs;
    }
    for (const char* h : {"A", "B"}) {
      if (l.host.find(h) == std::string::npos) continue;
      args.insert(args.end(), {"--run", std::string(h[0] == 'A' ? "h1:" : "h2:") + cmd});
      if (h[0] == 'B') ++h2_runs;
    }
  }
  args.insert(args.end(), {"--run", "h2:ssh root@h1 cat /run/serve.log"});
  const auto r = run_lab(args);
  EXPECT_EQ(r.exit, 0) << r.console;
  EXPECT_EQ(run_exit(r, "h2", check_run), 0) << r.console;
  const auto& check = run_output(r, "h2", check_run);
  ASSERT_TRUE(check.is_string()) << r.console;
  EXPECT_NE(check.get<std::string>().find("result: PASS (exit status 0)"), std::string::npos)
      << check.get<std::string>();
  // The server admitted B by the identity keygen gave it, over TLS.
  const auto& log = run_output(r, "h2", h2_runs);
  ASSERT_TRUE(log.is_string()) << r.console;
  EXPECT_NE(log.get<std::string>().find("[identity h2, TLSv1.3"), std::string::npos)
      << log.get<std::string>();
}

}  // namespace
}  // namespace rdmacheck::labtest
