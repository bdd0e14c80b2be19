// rdmacheck-mesh: every pair of hosts of a cluster, one rank per host under
// MPI (`mpirun -np N --map-by ppr:1:node rdmacheck mesh`, `srun rdmacheck
// mesh`). Its own binary so that the main rdmacheck never depends on MPI;
// `rdmacheck mesh` execs it. main() parses, starts MPI and dispatches; its
// flags, usage errors and printing are output/'s, the same as every command's.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

#include "base/version.h"
#include "base/writable.h"
#include "mesh/html.h"
#include "mesh/mpi_control.h"
#include "mesh/run.h"
#include "output/print.h"

namespace {

// Nothing sets it: a rank that mpirun or srun stops must die at once, with
// its verbs objects, so SIGINT and SIGTERM keep their default action.
const std::atomic<bool> g_stop{false};

// Rank 0's verdict on the output paths, before any work: "" when FILE can
// be written (or none was asked for), else one line saying why not. Only
// rank 0 writes, so only its file system counts.
std::string output_problem(const rdmacheck::OutputFlags& out, const std::string& html) {
  for (const auto& [flag, file] : {std::pair{"--json-file", out.json_file}, {"--html", html}}) {
    if (file.empty()) continue;
    if (auto why = rdmacheck::writable_file_problem(file); !why.empty()) {
      return std::string(flag) + ": " + why;
    }
  }
  return {};
}

// Rank 0's outputs, through the printer every command uses: the document
// (with the ticket header) to --json-file and --html, the text or the
// document to stdout. False: a file was not written.
bool publish(const rdmacheck::mesh::MeshReport& rep, const rdmacheck::OutputFlags& out,
             const std::string& html) {
  using namespace rdmacheck;
  const TicketHeader ticket = ticket_header(out, {});
  bool ok = true;
  if (!html.empty()) {
    if (auto s = mesh::write_html(html, document(rep, ticket)); !s) {
      std::fprintf(stderr, "rdmacheck mesh: --html: %s\n", s.error().message().c_str());
      ok = false;
    }
  }
  return print(rep, out, ticket) && ok;
}

int run(int argc, char** argv) {
  using namespace rdmacheck;
  record_command_line(argc, argv);  // before MPI_Init may edit argv
  mesh::MeshOptions o;
  OutputFlags out;
  std::string html;
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
  add_output_flags(app, out, "one JSON document (schemas/mesh.schema.json) on rank 0",
                   /*has_color=*/true, FileCheck::kByCaller);
  app.add_option("--html", html,
                 "also write a self-contained HTML page to FILE (rank 0): heatmaps of latency "
                 "and bandwidth, the findings, each round's time, the hosts' doctor")
      ->type_name("FILE");
  refuse_non_finite(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e.what());
  }
  o.round_timeout = std::chrono::seconds(round_timeout_s);
  std::signal(SIGPIPE, SIG_IGN);

  mesh::MpiControl mpi(&argc, &argv);
  // Rank 0 judges its own output paths and every rank hears the verdict, so
  // a bad path stops the whole mesh before any server, doctor or probe.
  const std::string problem = mpi.broadcast(mpi.rank() == 0 ? output_problem(out, html) : "");
  if (!problem.empty()) return mpi.rank() == 0 ? usage_error(app, problem) : 2;
  auto rep = mesh::run_mesh(o, mpi, g_stop);
  if (!rep) return 0;  // only rank 0 reports
  if (!publish(*rep, out, html)) return 2;
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
