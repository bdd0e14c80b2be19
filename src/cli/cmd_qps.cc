#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "doctor/sources.h"
#include "output/print.h"
#include "qps/qps.h"

namespace rdmacheck::cli {

Runner attach_qps(CLI::App& app) {
  struct Opts {
    OutputFlags out;
    std::string root;
    DevPort only;
  };
  auto o = std::make_shared<Opts>();
  add_dev_port(app, o->only);
  add_output_flags(app, o->out, "print the QPs as JSON");
  app.add_option("--root", o->root,
                 "replay the QPs of a 'doctor --capture' directory (also $RDMACHECK_ROOT)")
      ->check(CLI::ExistingDirectory);
  app.footer(
      "Lists every QP the kernel tracks (RDMA netlink, like 'rdma res show qp'): device/port,\n"
      "QPN, peer QPN, type, state, PID and command; QPs in INIT, RTR or ERR are marked.\n"
      "Exit status: 0 all QPs fine, 1 a QP in ERR, 2 the QP list could not be read.");
  return [o]() {
    const FsRoot fs = FsRoot::from_option(o->root);
    auto listed = doctor::sources_for(fs)->qps();
    if (listed) {
      std::erase_if(*listed, [&](const qps::QpInfo& q) {
        return !o->only.device(q.device) ||
               (o->only.port != 0 && q.port && static_cast<int>(*q.port) != o->only.port);
      });
    }
    const auto report = qps::make_report(std::move(listed));
    o->out.root = fs.root();
    if (report.error && !o->out.json) {
      std::fprintf(stderr, "rdmacheck qps: cannot list QPs: %s\n",
                   qps::explain(*report.error).c_str());
      return report.exit_status();
    }
    if (!print(report, o->out)) return 2;
    return report.exit_status();
  };
}

}  // namespace rdmacheck::cli
