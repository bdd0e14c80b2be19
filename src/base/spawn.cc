#include "base/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

namespace rdmacheck {

Result<Spawned> spawn_piped(const std::vector<std::string>& argv, SpawnOptions o) {
  if (argv.empty()) return plain_error("posix_spawn", "no program");
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return errno_error("pipe2");
  Fd rd(pipefd[0]);
  Fd wr(pipefd[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, wr.get(), 1);
  if (o.stderr_to_pipe) {
    posix_spawn_file_actions_adddup2(&fa, wr.get(), 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (o.own_process_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return code_error("posix_spawn", rc, argv[0]);
  return Spawned{pid, std::move(rd)};
}

}  // namespace rdmacheck
