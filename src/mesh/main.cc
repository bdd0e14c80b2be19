// rdmacheck-mesh: every pair of hosts of a cluster, one rank per host under
// MPI (`mpirun -np N --map-by ppr:1:node rdmacheck mesh`, `srun rdmacheck
// mesh`). Its own binary so that the main rdmacheck never depends on MPI;
// `rdmacheck mesh` execs it. main() parses, starts MPI and dispatches.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>

#include "base/version.h"
#include "mesh/mpi_control.h"
#include "mesh/run.h"

namespace {

// Nothing sets it: a rank that mpirun or srun stops must die at once, with
// its verbs objects, so SIGINT and SIGTERM keep their default action.
const std::atomic<bool> g_stop{false};

int run(int argc, char** argv) {
  using namespace rdmacheck;
  mesh::MeshOptions o;
  int round_timeout_s = 60;
  CLI::App app{
      "rdmacheck mesh: every pair of hosts of a cluster over RDMA verbs, one MPI rank per host; "
      "names the host or the link that is bad.\n"
      "  mpirun -np N --map-by ppr:1:node rdmacheck mesh\n  srun --ntasks-per-node=1 rdmacheck "
      "mesh\n"};
  app.name("rdmacheck mesh");
  app.set_version_flag("-V,--version", std::string("rdmacheck ") + kVersionString);
  app.add_flag("--quick", o.quick, "RC bring-up and ping only, no bandwidth");
  app.add_option("-s,--sizes", o.probe.sizes,
                 "RDMA WRITE message size(s) of the bandwidth test, comma-separated; units as "
                 "typed: 4k, 1M, 64KiB (default 64KiB)")
      ->delimiter(',')
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(1u, proto::kMaxMessageSize));
  app.add_option("-D,--duration", o.probe.duration_s,
                 "seconds of bandwidth test per size and direction (default 1)")
      ->check(CLI::Range(0.1, 60.0));
  app.add_option("--pings", o.probe.pings, "RC pings per direction (default 20)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--round-timeout", round_timeout_s,
                 "seconds a round may take, whatever a pair does; a dead pair costs this "
                 "(default 60)")
      ->check(CLI::Range(3, 3600));
  app.add_option("-d,--ib-dev", o.dev.device, "RDMA device on every host (default: by route)");
  app.add_flag("--json", o.json, "one JSON document (schemas/mesh.schema.json) on rank 0");
  app.add_option("--json-file", o.json_file, "also write the JSON document to FILE (rank 0)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "rdmacheck: error: %s (see 'rdmacheck mesh --help')\n", e.what());
    return 2;
  }
  o.round_timeout = std::chrono::seconds(round_timeout_s);
  std::signal(SIGPIPE, SIG_IGN);

  mesh::MpiControl mpi(&argc, &argv);
  auto rep = mesh::run_mesh(o, mpi, g_stop);
  if (!rep) return 0;  // only rank 0 reports
  const auto doc = mesh::to_json(*rep);
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file);
    f << doc.dump(2) << "\n";
    if (!f) std::fprintf(stderr, "rdmacheck mesh: cannot write %s\n", o.json_file.c_str());
  }
  std::fputs(o.json ? (doc.dump(2) + "\n").c_str() : mesh::format_text(*rep).c_str(), stdout);
  std::fflush(stdout);
  return mesh::exit_status(*rep);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdmacheck mesh: internal error: %s\n", e.what());
    return 2;
  }
}
