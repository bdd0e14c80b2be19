// `rdmacheck mesh`: the cluster test lives in its own binary, rdmacheck-mesh,
// which links MPI; this one never does. The subcommand execs it from next to
// this binary with the arguments as typed (its --help is its own), so
// `mpirun ... rdmacheck mesh` works wherever both are installed.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/command.h"

namespace rdmacheck::cli {

std::string mesh_program() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ((ec ? std::filesystem::path(".") : self.parent_path()) / "rdmacheck-mesh").string();
}

Runner attach_mesh(CLI::App& app) {
  app.prefix_command();
  app.allow_extras();
  app.set_help_flag();  // --help goes to rdmacheck-mesh
  return [&app] {
    std::vector<std::string> args = {mesh_program()};
    for (const auto& a : app.remaining()) args.push_back(a);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    const int err = errno;
    for (const auto& a : args) {
      if (a == "--help" || a == "-h") {  // still say what it is (help2man reads this)
        std::printf(
            "Usage: rdmacheck mesh [OPTIONS]\n\nEvery pair of hosts of a cluster over "
            "RDMA verbs, one MPI rank per host: mpirun -np N --map-by ppr:1:node "
            "rdmacheck mesh.\nIts options are rdmacheck-mesh's; this build has none "
            "(%s: %s).\n",
            argv[0], std::strerror(err));
        return 0;
      }
    }
    std::fprintf(stderr,
                 "rdmacheck mesh: mesh runs %s (%s): build rdmacheck where MPI is installed "
                 "(Debian: apt-get install libopenmpi-dev) to get it\n",
                 argv[0], std::strerror(err));
    return 2;
  };
}

}  // namespace rdmacheck::cli
