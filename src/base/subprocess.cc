#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/tcp.h"

namespace rdmacheck {

Result<ProcessOutput> run_capture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return errno_error("pipe2");
  Fd rd(pipefd[0]);
  Fd wr(pipefd[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return code_error("posix_spawn", rc, argv[0]);
  wr = Fd();
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
  if (!killed && WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  return result;
}

}  // namespace rdmacheck
