#include <memory>

#include "base/enum_table.h"
#include "cli/command.h"
#include "lab/control.h"
#include "lab/lab.h"
#include "output/print.h"

namespace rdmacheck::cli {

namespace {

// The faults the lab reproduces: on a host, in the switch, and when.
void add_fault_options(CLI::App& app, lab::LabOptions& l) {
  app.add_option("--fault", l.faults,
                 "a classic fault on a host (default h1) or on one NIC of it (@HOST-K: NIC K, "
                 "eth(K-1)): firewall, mtu-mismatch, loss:PERCENT, link-down, powersave, "
                 "no-server; e.g. --fault loss:1@h2, --fault link-down@h2-2. Or a fault in the "
                 "switch between the hosts, on HOST's port (:in towards it, :out from it, both "
                 "by default), which neither host can see: switch-loss:PCT, "
                 "switch-burst-loss:PCT[/BURST], switch-delay:MS[/JITTER], switch-dup:PCT, "
                 "switch-corrupt:PCT, switch-reorder:PCT[/GAP_MS], switch-rate:MBIT, "
                 "switch-maxsize:BYTES, switch-flap:DOWN_S/PERIOD_S; e.g. "
                 "--fault switch-loss:1@h2:in (docs/lab.md)");
  app.add_option("--fault-at", l.fault_at,
                 "SECONDS:SWITCH-FAULT starts a switch fault that many seconds after every guest "
                 "began its test, e.g. --fault-at 20:switch-flap:3/10@h1");
  app.add_option("--fault-until", l.fault_until,
                 "SECONDS:SWITCH-FAULT ends a switch fault that many seconds into the test: "
                 "the one --fault-at starts (a window), else one from the start, e.g. "
                 "--fault-until 15:switch-loss:100@h2");
  app.add_option("--seed", l.seed,
                 "seed of the switch faults' random choices (the same seed, the same choices "
                 "for the same frames)")
      ->default_val(1);
}

// --device-order: which rxe device sits on which NIC.
void add_device_order_option(CLI::App& app, std::string& device_order) {
  std::vector<std::string> orders;
  orders.reserve(std::size(EnumNames<lab::DeviceOrder>::table));
  for (const auto& [order, name] : EnumNames<lab::DeviceOrder>::table) orders.emplace_back(name);
  app.add_option("--device-order", device_order,
                 "nics: rxeK on ethK; reversed: rxe0 on the last NIC, as on hosts whose "
                 "mlx5_0 is not the NIC that routes to the peer")
      ->check(CLI::IsMember(orders))
      ->default_val("nics");
}

struct LabCli {
  lab::LabOptions l;
  int timeout_s = 300;
  std::string device_order = "nics";
};

void add_lab_options(CLI::App& app, LabCli& o) {
  app.add_option("--hosts", o.l.hosts, "number of guests h1..hN (198.18.0.1..N)")
      ->check(CLI::Range(1, lab::kMaxHosts))
      ->default_val(2);
  app.add_option("--nics", o.l.nics,
                 "NICs per host, each on its own wire: NIC k of hH is eth(k-1), "
                 "198.18.(k-1).H/24, named hH-k, with its own rxe device; hH resolves to "
                 "NIC 1's address")
      ->check(CLI::Range(1, lab::kMaxNics))
      ->default_val(1);
  add_device_order_option(app, o.device_order);
  app.add_option("--setup", o.l.setup,
                 "HOST:CMD run as root on HOST once its rxe devices are up, before the test "
                 "(repeatable), e.g. 'h1:iptables -I INPUT -p udp --dport 4791 -j DROP' or, "
                 "for one wire, 'h2:ip link set eth1 down'");
  app.add_option("--run", o.l.run,
                 "HOST:CMD replaces the default test (repeatable); rdmacheck is on the PATH");
  app.add_option("--serve-args", o.l.serve_args,
                 "more options for h1's 'rdmacheck serve' (which always proves the lab's own "
                 "random key), e.g. '--allow 198.18.0.2 --no-share-doctor'");
  add_fault_options(app, o.l);
  app.add_flag("--ssh", o.l.ssh,
               "passwordless ssh as root between the guests (keys and host keys made for this "
               "run, nothing from ~/.ssh) and an MPI hostfile at /run/lab/hostfile");
  app.add_flag("--mesh", o.l.mesh,
               "--ssh, and the default test is 'mpirun ... rdmacheck mesh' from h1 over every "
               "guest (rdmacheck lab --hosts 4 --mesh)");
  app.add_flag(
      "-j,--json", o.l.json,
      "pass --json to the default test and print one JSON document (consoles go to stderr)");
  app.add_option("--kernel", o.l.kernel,
                 "kernel image to boot (default: newest /boot/vmlinuz-* "
                 "with rdma_rxe)");
  app.add_option("--timeout", o.timeout_s, "seconds before every guest is killed")
      ->check(CLI::Range(10, 7200))
      ->default_val(300);
  app.add_option("--memory", o.l.memory_mb, "MiB of memory per guest")
      ->check(CLI::Range(256, 8192))
      ->default_val(768);
  app.add_option("--accel", o.l.accel,
                 "tcg (default: works everywhere) or kvm (only where "
                 "/dev/kvm really works)")
      ->check(CLI::IsMember({"tcg", "kvm"}))
      ->default_val("tcg");
  app.add_option("--workdir", o.l.workdir,
                 "directory for the lab's files (default: a new one "
                 "in $TMPDIR, removed afterwards)");
  app.add_flag("--keep", o.l.keep, "keep the work directory (guest outputs, scripts, logs)");
  app.add_flag("-v,--verbose", o.l.verbose, "show firmware and kernel console lines too");
  app.footer(
      "Boots N QEMU guests with the host's own root file system (read-only), Debian's kernel and\n"
      "Soft-RoCE (rdma_rxe) on one virtual wire per NIC (--nics); h1 runs 'rdmacheck serve', hN\n"
      "runs the test.\n"
      "Exit status: the test's (0 pass, 1 warnings, 2 fail), 3 when the lab itself failed.");
}

// rdmacheck lab fault: the running lab's switch, from another shell.
struct FaultCli {
  std::string action;
  std::string spec;
  std::string workdir;
};

CLI::App* add_fault_command(CLI::App& app, FaultCli& f) {
  auto* fault = app.add_subcommand(
      "fault", "change the switch faults of a running lab: add SWITCH-FAULT, clear, list");
  fault->add_option("action", f.action, "add, clear or list")
      ->required()
      ->check(CLI::IsMember({"add", "clear", "list"}));
  fault->add_option("fault", f.spec,
                    "with add: a switch fault as --fault spells it, e.g. switch-loss:5@h2:in");
  fault->add_option("--workdir", f.workdir,
                    "the running lab's work directory (default: the one lab running in $TMPDIR)");
  fault->footer(
      "Acts at once, between the lab's other work; the wire report at the end counts what every "
      "fault did.\nExit status: 0 done, 2 refused (the reply says why), 3 no running lab.");
  return fault;
}

int run_fault_command(const FaultCli& f) {
  if ((f.action == "add") == f.spec.empty()) {
    std::fprintf(stderr, "rdmacheck lab fault: %s\n",
                 f.action == "add" ? "add needs a switch fault, e.g. switch-loss:5@h2"
                                   : "clear and list take no fault");
    return 2;
  }
  auto sock = lab::find_lab_control(f.workdir);
  if (!sock) {
    std::fprintf(stderr, "rdmacheck lab fault: %s\n", sock.error().context.c_str());
    return lab::kLabFailed;
  }
  auto reply = lab::control_request(*sock, f.action + (f.spec.empty() ? "" : " " + f.spec));
  if (!reply) {
    std::fprintf(stderr, "rdmacheck lab fault: %s\n", reply.error().message().c_str());
    return lab::kLabFailed;
  }
  const bool ok = reply->rfind("ok", 0) == 0;
  std::fprintf(ok ? stdout : stderr, "%s\n",
               ok ? reply->c_str() : ("rdmacheck lab fault: " + *reply).c_str());
  return ok ? 0 : 2;
}

}  // namespace

Runner attach_lab(CLI::App& app) {
  auto o = std::make_shared<LabCli>();
  add_lab_options(app, *o);
  auto f = std::make_shared<FaultCli>();
  auto* fault = add_fault_command(app, *f);
  return [o, f, fault]() {
    if (fault->parsed()) return run_fault_command(*f);
    lab::LabOptions l = o->l;
    l.timeout = std::chrono::seconds(o->timeout_s);
    l.device_order = *parse_enum<lab::DeviceOrder>(o->device_order);
    // --json's header is every command's: this machine, this command line.
    return lab::run_lab(l, ticket_header(OutputFlags{}, {}), stop_requested());
  };
}

}  // namespace rdmacheck::cli
