#include "serve/hello_policy.h"

#include <gtest/gtest.h>

namespace rdmacheck::serve {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A ping's session holds its slot for what the client said it needs, plus
// the grace for its bye; never past --session-timeout; an older client that
// says nothing gets --session-timeout as before.
TEST(RequestEnd, FollowsTheClientsBudgetWithinTheSessionTimeout) {
  const Deadline now = Clock::now();
  const Deadline session_end = now + seconds(120);
  proto::Hello ping;
  EXPECT_EQ(request_end(ping, session_end, now), session_end) << "no budget said";
  ping.test.budget_ms = 3000;
  EXPECT_EQ(request_end(ping, session_end, now), now + milliseconds(3000) + kBudgetGrace);
  ping.test.budget_ms = 600000;  // more than the server allows: its own limit holds
  EXPECT_EQ(request_end(ping, session_end, now), session_end);
}

}  // namespace
}  // namespace rdmacheck::serve
