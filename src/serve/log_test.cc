#include "serve/log.h"

#include <gtest/gtest.h>

#include <string>

namespace rdmacheck::serve {
namespace {

using namespace std::chrono_literals;

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) s.append(buf, n);
  return s;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(ServeLog, ControlCharactersAreEscaped) {
  EXPECT_EQ(escape_line("a\nb\x1b[2J\x7f"), "a\\x0ab\\x1b[2J\\x7f");
  EXPECT_EQ(escape_line("h2 (rxe0 fe80::1)"), "h2 (rxe0 fe80::1)");
}

TEST(ServeLog, AFloodIsCutToTheRateAndTheLeftOutLinesAreCounted) {
  std::FILE* f = std::tmpfile();
  Log log(f, Log::Rate{10, 5});
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) log.line_at("refused 192.0.2.1: busy", t0);
  EXPECT_EQ(count(read_all(f), "refused"), 5u);  // the burst
  // A second later: ten more lines may pass, and the first says what was left out.
  log.line_at("session 7 end: ok", t0 + 1s);
  const std::string out = read_all(f);
  std::fclose(f);
  EXPECT_NE(out.find("95 log lines left out (more than 10 a second)\nsession 7 end: ok\n"),
            std::string::npos)
      << out;
}

TEST(ServeLog, AQuietServerLogsEveryLine) {
  std::FILE* f = std::tmpfile();
  Log log(f, Log::Rate{10, 5});
  const auto t0 = Clock::now();
  for (int i = 0; i < 50; ++i) log.line_at("line", t0 + i * 100ms);
  const std::string out = read_all(f);
  std::fclose(f);
  EXPECT_EQ(count(out, "line\n"), 50u);
  EXPECT_EQ(out.find("left out"), std::string::npos);
}

}  // namespace
}  // namespace rdmacheck::serve
