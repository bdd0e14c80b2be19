#include <cstdio>
#include <memory>

#include "check/check.h"
#include "check/html.h"
#include "check/report.h"
#include "cli/command.h"
#include "cli/target_options.h"
#include "output/print.h"

namespace rdmacheck::cli {

Runner attach_check(CLI::App& app) {
  struct Opts {
    check::CheckOptions c;
    OutputFlags out;
    std::string html;
    int timeout_s = 180;
  };
  auto o = std::make_shared<Opts>();
  add_target_options(app, o->c.target, TargetFlags{.src = true});
  app.add_flag("--cm", o->c.cm, "also bring up an rdma_cm connection (as rping does)");
  app.add_flag("--quick", o->c.quick, "skip the performance layer");
  app.add_flag("--full", o->c.full, "every operation and size in the performance layer");
  app.add_option("--timeout", o->timeout_s, "seconds the whole check may take")
      ->check(CLI::Range(10, 3600))
      ->default_val(180);
  add_output_flags(app, o->out, "print the report as JSON", /*has_color=*/true);
  app.add_flag_callback(
      "--brief", [o] { o->out.detail = Detail::kBrief; },
      "a few lines for a ticket: each layer's status, the finding to fix first and its fix");
  app.add_option("--html", o->html,
                 "also write a self-contained HTML report (charts, timelines, counters) to FILE")
      ->check(file_in_writable_dir());
  app.footer(
      "Layer 1 device (both hosts' doctor and a comparison), layer 2 connection (RC, UD and\n"
      "optionally rdma_cm pings, size ladder), layer 3 performance (write/read bandwidth, "
      "write/send\n"
      "latency, counters, verdict). Stops at the first failed layer.\n"
      "Exit status: 0 all PASS, 1 warnings, 2 a layer failed or the --timeout passed.");
  return [o, &app]() {
    check::CheckOptions c = o->c;
    if (c.quick && c.full) return usage_error(app, "--quick and --full contradict each other");
    if (!c.target.src.empty() && !c.cm) {
      return usage_error(app, "--src chooses the address rdma_cm resolves from; add --cm");
    }
    c.timeout = std::chrono::seconds(o->timeout_s);
    c.priority_given = app.count("--tclass") + app.count("--sl") > 0;
    const auto r = check::run_check(c, stop_requested());
    const TicketHeader ticket = ticket_header(o->out, devices_of(r));
    const bool printed = print(r, o->out, ticket);
    if (!o->html.empty()) {
      if (auto s = check::write_html(o->html, document(r, ticket)); !s) {
        std::fprintf(stderr, "rdmacheck check: --html: %s\n", s.error().message().c_str());
        return 2;
      }
    }
    return printed ? check::exit_status(r) : 2;
  };
}

}  // namespace rdmacheck::cli
