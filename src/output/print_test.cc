// The front ends' shared floor: the usage line's program name, the refusal
// of NaN, where --json-file's directory is checked, and print()'s two forms
// and its file (rdmacheck's commands and rdmacheck-mesh both use these).
#include "output/print.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "testing/temp_dir.h"

namespace rdmacheck {
namespace {

// A report as every module has one: its two printers and its exit status.
struct TinyReport {
  int exit = 1;
};
nlohmann::json to_json(const TinyReport& r) { return {{"command", "tiny"}, {"value", r.exit}}; }
std::string format_text(const TinyReport& r, const TextStyle& style) {
  return "tiny: " +
         paint(r.exit == 0 ? "PASS" : "WARN", r.exit == 0 ? Tone::kGood : Tone::kWarn, style) +
         "\n";
}
int exit_status(const TinyReport& r) { return r.exit; }

const TicketHeader kTicket{.version = "0.1.0",
                           .kernel = "6.1.0-28-amd64",
                           .rdma_core = "44.0",
                           .timestamp = "2026-12-07T16:00:00Z",
                           .command_line = "rdmacheck tiny"};

TEST(Usage, TheProgramIsTheSubcommandUnderItsRootOrTheRootAlone) {
  CLI::App root{"", "rdmacheck"};
  CLI::App* ping = root.add_subcommand("ping", "");
  EXPECT_EQ(program_name(*ping), "rdmacheck ping");
  CLI::App mesh{"", "rdmacheck mesh"};
  EXPECT_EQ(program_name(mesh), "rdmacheck mesh");
  EXPECT_EQ(usage_error(mesh, "--html: no"), 2);
}

TEST(Usage, NanAndInfinityAreRefusedByEveryOptionThatTakesAValue) {
  CLI::App app{"", "rdmacheck mesh"};
  double d = 1;
  app.add_option("-D,--duration", d)->check(CLI::Range(0.1, 60.0));
  refuse_non_finite(app);
  // NaN passes Range (every comparison is false): only the finite check stops
  // it. Infinity is out of range as well; either check may name it.
  for (const auto& [v, finite_named] :
       {std::pair{"nan", true}, {"NaN(1)", true}, {"-inf", false}, {"Infinity", false}}) {
    const char* argv[] = {"rdmacheck-mesh", "-D", v};
    try {
      app.parse(3, argv);
      ADD_FAILURE() << v << " was accepted";
    } catch (const CLI::ValidationError& e) {
      if (finite_named) {
        EXPECT_NE(std::string(e.what()).find("is not a finite number"), std::string::npos) << v;
      }
    }
  }
  const char* ok[] = {"rdmacheck-mesh", "-D", "2.5"};
  app.parse(3, ok);
  EXPECT_EQ(d, 2.5);
}

// Every command checks --json-file's directory while parsing; the mesh checks
// it on rank 0 only (FileCheck::kByCaller), so parsing lets it through.
TEST(OutputFlags, TheJsonFilesDirectoryIsCheckedWhileParsingUnlessTheCallerDoes) {
  const char* argv[] = {"x", "--json-file", "/nonexistent-dir/r.json", "-j"};
  CLI::App parsing{"", "rdmacheck doctor"};
  OutputFlags a;
  add_output_flags(parsing, a, "print JSON");
  EXPECT_THROW(parsing.parse(4, argv), CLI::ValidationError);
  CLI::App by_caller{"", "rdmacheck mesh"};
  OutputFlags b;
  add_output_flags(by_caller, b, "print JSON", /*has_color=*/true, FileCheck::kByCaller);
  by_caller.parse(4, argv);
  EXPECT_EQ(b.json_file, "/nonexistent-dir/r.json");
  EXPECT_TRUE(b.json);
  EXPECT_NE(by_caller.get_option_no_throw("--no-color"), nullptr);
  EXPECT_EQ(parsing.get_option_no_throw("--no-color"), nullptr);
}

TEST(Print, TextOrDocumentOnStdoutAndTheDocumentInItsFileWithItsExitStatus) {
  const auto dir = test_util::make_temp_dir("print");
  OutputFlags out;
  out.json_file = (dir / "r.json").string();
  out.text_header = false;
  testing::internal::CaptureStdout();
  EXPECT_TRUE(print(TinyReport{}, out, kTicket));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "tiny: WARN\n");
  std::ifstream in(out.json_file);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  EXPECT_EQ(doc["exit_status"], 1);
  EXPECT_EQ(doc["value"], 1);
  EXPECT_EQ(doc["ticket"]["command_line"], "rdmacheck tiny") << doc.dump();
  // Written through temp + rename: only the document is left in the directory.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);

  out.json = true;
  out.json_file = (dir / "gone" / "r.json").string();  // its directory does not exist
  testing::internal::CaptureStdout();
  EXPECT_FALSE(print(TinyReport{.exit = 0}, out, kTicket));
  EXPECT_EQ(nlohmann::json::parse(testing::internal::GetCapturedStdout())["exit_status"], 0);
  std::filesystem::remove_all(dir);
}

TEST(TextStyle, PaintColoursOnlyWhenAsked) {
  EXPECT_EQ(paint("FAIL", Tone::kBad, TextStyle{}), "FAIL");
  EXPECT_EQ(paint("FAIL", Tone::kBad, TextStyle{.color = true}), "\033[1;31mFAIL\033[0m");
  EXPECT_EQ(paint("PASS", Tone::kGood, TextStyle{.color = true}), "\033[1;32mPASS\033[0m");
}

}  // namespace
}  // namespace rdmacheck
