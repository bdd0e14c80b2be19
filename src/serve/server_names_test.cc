#include "serve/server_names.h"

#include <gtest/gtest.h>

namespace rdmacheck::serve {
namespace {

TEST(ServerNames, TheNamesGivenCaseAndATrailingDotAside) {
  const std::vector<std::string> names = {"h1", "h1.rack3.example"};
  EXPECT_TRUE(answers_to(names, "h1"));
  EXPECT_TRUE(answers_to(names, "H1"));
  EXPECT_TRUE(answers_to(names, "h1.rack3.example."));
  EXPECT_FALSE(answers_to(names, "h3"));
  EXPECT_FALSE(answers_to(names, "h1.rack3"));
  EXPECT_FALSE(answers_to(names, "")) << "a client that names nothing";
  EXPECT_FALSE(answers_to(names, "."));
}

// This machine's own addresses count as dialled literals: loopback is one on
// every machine; a documentation address (RFC 5737, RFC 3849) never is.
TEST(ServerNames, ThisMachinesOwnAddressesCount) {
  const std::vector<std::string> names = {"h1"};
  EXPECT_TRUE(answers_to(names, "127.0.0.1"));
  EXPECT_FALSE(answers_to(names, "192.0.2.1"));
  EXPECT_FALSE(answers_to(names, "[2001:db8::1]"));
  EXPECT_FALSE(answers_to(names, "127.0.0.1.example"));
}

}  // namespace
}  // namespace rdmacheck::serve
