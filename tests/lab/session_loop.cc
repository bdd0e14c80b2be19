// Test-only: N sequential ping sessions against HOST from one process, for
// the lab's leak test (abuse_lab_test.cc). One process, so that the guest's
// time goes to sessions rather than to starting N programs under emulation.
// Each session is what `rdmacheck ping HOST -n 1 --no-ladder` opens: key
// proof, hello, QP to RTS on both sides, one RC send echoed, bye.
// Prints "sessions: OK of N in S s" and, for the first failure, its error.
// Usage: session_loop HOST N  (the key from RDMACHECK_PSK_FILE, as the CLI's)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "conn/ping.h"

int main(int argc, char** argv) {
  using namespace rdmacheck;
  if (argc != 3) {
    std::fprintf(stderr, "usage: session_loop HOST N\n");
    return 2;
  }
  conn::PingOptions o;
  o.target.host = argv[1];
  if (const char* key = std::getenv("RDMACHECK_PSK_FILE")) o.target.psk_file = key;
  o.count = 1;
  o.ladder = false;
  const int n = std::atoi(argv[2]);
  int ok = 0;
  std::string first_error;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const conn::PingReport r = conn::run_ping(o);
    if (r.obs.failed == conn::Stage::kDone && r.obs.pings_ok == 1) {
      ++ok;
    } else if (first_error.empty()) {
      first_error = "session " + std::to_string(i + 1) + ": " + r.obs.error;
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("sessions: %d of %d in %.1f s\n", ok, n, s);
  if (!first_error.empty()) std::printf("first failure: %s\n", first_error.c_str());
  return ok == n ? 0 : 1;
}
