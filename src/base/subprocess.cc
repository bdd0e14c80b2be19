#include "base/subprocess.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/deadline.h"
#include "base/spawn.h"

namespace rdmacheck {

Result<ProcessOutput> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
  auto child = spawn_piped(argv);
  if (!child) return child.error();
  const pid_t pid = child->pid;
  const Fd& rd = child->out;
  ProcessOutput result;
  const Deadline d = deadline_in(timeout);
  char buf[4096];
  bool killed = false;
  for (;;) {
    pollfd p{rd.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, ms_left(d));
    if (n == 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const ssize_t got = ::read(rd.get(), buf, sizeof buf);
    if (got <= 0) break;
    if (result.out.size() < (1u << 20)) result.out.append(buf, static_cast<size_t>(got));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.timed_out = killed;
  if (!killed && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

}  // namespace rdmacheck
