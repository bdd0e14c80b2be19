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

// What a client names itself may hold anything: a C1 control (CSI as one
// code point, U+009B), a right-to-left override that shows "ok" where the
// bytes say "ko", bytes that are not UTF-8. Each is written as what it is;
// other characters stay as they are.
TEST(ServeLog, C1BidiAndBytesThatAreNotUtf8AreEscaped) {
  EXPECT_EQ(escape_line("host\xc2\x9b"
                        "2J"),
            "host\\u{009B}2J");
  EXPECT_EQ(escape_line("end: \xe2\x80\xaeko\xe2\x80\xac"), "end: \\u{202E}ko\\u{202C}");
  EXPECT_EQ(escape_line("\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\x8f"), "\\u{2066}x\\u{2069}\\u{200F}");
  EXPECT_EQ(escape_line("\xff\xc0\xaf"
                        "a\xe2\x82"),
            "\\xff\\xc0\\xafa\\xe2\\x82");
  EXPECT_EQ(escape_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escape_line("h\xc3\xb6st \xe2\x82\xac \xf0\x9f\x98\x80"),
            "h\xc3\xb6st \xe2\x82\xac \xf0\x9f\x98\x80");
}

// A flood of other lines cannot starve the security events, which have a
// budget of their own; a flood of them is cut and counted apart.
TEST(ServeLog, SecurityEventsHaveTheirOwnBudget) {
  std::FILE* f = std::tmpfile();
  Log log(f, Log::Rate{10, 5});
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) log.line_at("refused 192.0.2.1: busy", t0);
  log.security("session 9 end: auth-failed: identity 'x'");
  for (int i = 0; i < 20; ++i) log.line_at("session 10 end: auth-failed", t0, true);
  log.line_at("session 11 end: auth-failed", t0 + 1s, true);
  const std::string out = read_all(f);
  std::fclose(f);
  EXPECT_EQ(count(out, "refused"), 5u);
  EXPECT_NE(out.find("session 9 end: auth-failed: identity 'x'\n"), std::string::npos) << out;
  EXPECT_EQ(count(out, "session 10 end"), 4u) << out;
  EXPECT_NE(out.find("16 security log lines left out (more than 10 a second)\nsession 11"),
            std::string::npos)
      << out;
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
