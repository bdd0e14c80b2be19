#include <cstdio>
#include <map>
#include <memory>

#include "base/version.h"
#include "cli/command.h"
#include "cli/target_options.h"
#include "doctor/capture.h"
#include "doctor/doctor.h"
#include "output/print.h"

namespace rdmacheck::cli {
namespace {

int capture(const std::string& dir, const OutputFlags& out) {
  if (auto st = doctor::prepare_capture_dir(dir); !st) {
    std::fprintf(stderr, "rdmacheck doctor: %s\n", st.error().message().c_str());
    return 2;
  }
  FsRoot fs = FsRoot::live();
  auto rec = std::make_shared<doctor::PathRecorder>();
  fs.observe(rec);
  doctor::RecordingSources src(doctor::live_sources(fs));
  const auto report = doctor::run_doctor(fs, src);
  (void)src.qps();  // so `rdmacheck qps --root DIR` replays too
  auto files = src.files();
  files["doctor"] = doctor::to_json(report);
  files["manifest"] = {
      {"made_by", std::string("rdmacheck ") + kVersionString + " doctor --capture"},
      {"hostname", report.hostname},
      {"kernel", report.kernel},
      {"created_unix", static_cast<long long>(::time(nullptr))},
      {"replay", "rdmacheck doctor --root " + dir}};
  auto copied = doctor::copy_recorded(*rec, dir);
  auto st = copied ? doctor::write_capture_files(dir, files) : Status(copied.error());
  if (!st) {
    std::fprintf(stderr, "rdmacheck doctor: capture: %s\n", st.error().message().c_str());
    return 2;
  }
  if (!print(report, out)) return 2;
  std::fprintf(stderr,
               "captured %d files and %zu source answers into %s (replay: rdmacheck doctor "
               "--root %s)\n",
               *copied, files.size(), dir.c_str(), dir.c_str());
  return report.exit_status();
}

// -d/-i: the checks of that device (its ports, its netdevs) and the host's.
void keep_only(doctor::DoctorReport& r, const DevPort& only, const std::vector<DeviceInfo>& devs) {
  std::map<std::string, std::string> owner;  // subject -> "dev/port" it belongs to
  for (const auto& d : devs) {
    owner[d.name] = d.name;
    for (const auto& p : d.ports) {
      const std::string port = d.name + "/" + std::to_string(p.port);
      owner[port] = port;
      if (!p.netdev.empty()) owner[p.netdev] = port;
    }
  }
  std::erase_if(r.checks, [&](const doctor::CheckResult& c) {
    auto it = owner.find(c.subject);
    return it != owner.end() && !only.subject(it->second);
  });
}

}  // namespace

Runner attach_doctor(CLI::App& app) {
  struct Opts {
    OutputFlags out;
    std::string root;
    std::string capture;
    DevPort only;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("-d,--device,--ib-dev", o->only.dev,
                 "only this device's checks (and the host's), as ibv_devinfo -d");
  app.add_option("-i,--ib-port", o->only.port, "with -d: only this port's, as ibv_devinfo -i")
      ->check(CLI::Range(1, 255))
      ->needs("-d");
  add_output_flags(app, o->out, "print the report as JSON");
  app.add_flag_callback(
      "-v,--verbose", [o] { o->out.detail = Detail::kVerbose; },
      "also print every fact each check read (as ibv_devinfo -v); the JSON always has them");
  app.add_option("--root", o->root,
                 "replay a capture: read files under DIR and the captured ethtool, address, DCB, "
                 "firewall and verbs answers from DIR/capture (also $RDMACHECK_ROOT)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--capture", o->capture,
                 "also copy every file the checks read, and the other sources' answers, into "
                 "DIR (new or empty) for a bug report")
      ->excludes("--root");
  app.footer(
      "Checks, grouped by layer: RDMA devices and user space, port and physical state, GID table\n"
      "vs the netdev's addresses, netdev link speed vs its capability, locked-memory limit,\n"
      "packet filter (UDP 4791), MTU, PCIe link, NUMA node, CPU governor and C-states,\n"
      "PFC/ECN, hardware error counters. Each finding has a stable id, evidence and a fix.\n"
      "Exit status: 0 nothing at warn or above, 1 warnings, 2 failures (or bad usage).");
  return [o, &app]() {
    if (!o->capture.empty()) return capture(o->capture, o->out);
    const FsRoot fs = FsRoot::from_option(o->root);
    auto src = doctor::sources_for(fs);
    auto report = doctor::run_doctor(fs, *src);
    if (!o->only.dev.empty()) {
      const auto devices = read_rdma_devices(fs);
      if (auto why = missing(o->only, devices); !why.empty()) return usage_error(app, why);
      keep_only(report, o->only, devices);
    }
    o->out.root = fs.root();
    if (!print(report, o->out)) return 2;
    return report.exit_status();
  };
}

}  // namespace rdmacheck::cli
