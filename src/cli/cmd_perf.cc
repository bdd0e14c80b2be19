// `rdmacheck bw HOST` and `rdmacheck lat HOST`: perftest's flags where they
// mean the same thing (-d -i -x -s -n -a -D -q -b -c -t -I -l -Q -R -T -S -m -u
// --run_infinitely --output --out_json_file), declared once for both commands.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/target_options.h"
#include "output/print.h"
#include "perf/client.h"
#include "perf/report.h"

namespace rdmacheck::cli {
namespace {

struct PerfOpts {
  perf::PerfOptions p;
  std::string op;
  std::string transport = "RC";
  std::vector<uint32_t> sizes;
  bool all = false;
  uint64_t iterations = 0;
  bool report_gbits = false;
  bool cpu_freq = false;
  bool out_json = false;
  std::string output;  // --output: one figure only
  int ack_timeout = 0;
  OutputFlags out;
  double timeout_s = 120;
  uint32_t cq_mod = 0;  // 0: chosen from the tx depth
};

// What is measured: the path, the operation, the sizes and how long.
void declare_test(CLI::App& app, PerfOpts& o, bool bw) {
  add_target_options(app, o.p.target, TargetFlags{.src = true, .path_mtu = true, .perftest = true});
  app.add_option("--op", o.op,
                 "write | read | send | atomic_fadd | atomic_cswap" +
                     std::string(bw ? " | write_imm" : "") +
                     " (default: write; send with -c UD, as perftest's ib_send_bw)")
      ->default_val("write");
  app.add_option("-c,--connection", o.transport,
                 "transport: RC, UC (send/write/write_imm) or UD (send only)")
      ->default_val("RC");
  app.add_option("-s,--size", o.sizes,
                 "message size(s), comma-separated; units as typed: 4k, 1M, 64KiB (all 1024-based)")
      ->delimiter(',')
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(1u, proto::kMaxMessageSize));
  app.add_flag("-a,--all", o.all, "every power of two from 2 B to 8 MiB (not with -s)");
  app.add_option(
         "-n,--iters", o.iterations,
         bw ? "messages per size and QP (default 5000)" : "round trips per size (default 1000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("-D,--duration", o.p.spec.duration_s,
                 bw ? "seconds per size instead of -n (with --run_infinitely: seconds per live "
                      "line, default 5)"
                    : "seconds per size instead of -n")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--warmup", o.p.spec.warmup_s,
                 "with -D: seconds not counted at the start (perftest's margin)")
      ->check(CLI::Range(0.0, 60.0));
  if (bw) {  // lat keeps every sample: it has no endless mode
    app.add_flag("--run_infinitely,--run-infinitely", o.p.spec.run_infinitely,
                 "run one size until Ctrl-C, a line with the last interval's rate every -D "
                 "seconds on stdout, then the report of the whole run");
  }
}

// How the queue pairs are driven: timeouts, depths, signalling, inline.
void declare_queues(CLI::App& app, PerfOpts& o, bool bw) {
  app.add_option("-u,--qp-timeout,--qp_timeout", o.ack_timeout,
                 "RC ACK timeout exponent of both QPs: 4.096 us * 2^N per try, as perftest's -u "
                 "(default: derived from the round trip, at least 16)")
      ->check(CLI::Range(1, 31));
  if (bw) {
    app.add_option("-q,--qp", o.p.spec.qps, "queue pairs, one session each")
        ->check(CLI::Range(1u, 16u))
        ->default_val(1);
    app.add_option("-t,--tx-depth", o.p.spec.tx_depth, "outstanding work requests per QP")
        ->check(CLI::Range(1u, proto::kMaxDepth))
        ->default_val(128);
    app.add_option("-r,--rx-depth", o.p.spec.rx_depth, "receives the server keeps posted")
        ->check(CLI::Range(1u, proto::kMaxDepth))
        ->default_val(512);
    app.add_option("-l,--post-list,--post_list", o.p.spec.post_list,
                   "work requests per ibv_post_send")
        ->check(CLI::Range(1u, proto::kMaxDepth))
        ->default_val(1);
    app.add_option("-Q,--cq-mod", o.cq_mod,
                   "signal every Nth work request, as perftest's -Q: -t is rounded up to a "
                   "multiple of N (N above -t becomes -t) (default: the largest of 64, 32, ... 1 "
                   "that divides -t)")
        ->check(CLI::Range(1u, proto::kMaxDepth));
    app.add_flag("-e,--events", o.p.spec.events,
                 "sleep on the completion channel between completions instead of busy-polling "
                 "the CQ, as perftest's -e: less CPU per message, a wakeup's latency more (on "
                 "Soft-RoCE the CPU is the NIC, so the time a poll does not burn goes to rxe)");
    app.add_flag("-b,--bidirectional", o.p.spec.bidir,
                 "both hosts send at once (the server runs the same test back); figures are the "
                 "sum of both directions, as perftest's -b");
    app.add_flag("--report-gbits,--report_gbits", o.report_gbits,
                 "--output bandwidth in Gb/s instead of MiB/s, as perftest's (the table always "
                 "shows both)");
  } else {
    app.add_flag("-H,--histogram,--report-histogram,--report-histogrm", o.p.spec.histogram,
                 "print a histogram of the latencies (ten buckets a decade)");
  }
  app.add_option("-I,--inline-size,--inline_size", o.p.spec.inline_size,
                 "post messages up to N bytes inline")
      ->check(CLI::Range(0u, 1024u))
      ->default_val(bw ? 0 : 64);
}

// Checks, placement, limits and the output.
void declare_report(CLI::App& app, PerfOpts& o, bool bw) {
  app.add_flag("--validate", o.p.spec.validate,
               "fill every message with a per-size pattern and check, on both hosts, that what "
               "landed is exactly what was sent (costs a barrier per size)");
  app.add_flag("--cpu-util,--cpu_util", o.p.spec.cpu_util,
               "report the CPU time both sides' measuring threads used (busy polling is ~100 %)");
  app.add_flag("-R,--cm,--rdma_cm", o.p.cm,
               "connect the RC queue pairs through librdmacm (address, route, connect), as "
               "perftest's -R and rping do");
  app.add_option("--cpu", o.p.cpu, "pin to this core (default: one on the device's NUMA node)")
      ->check(CLI::Range(0, 4095));
  app.add_option("--timeout", o.timeout_s,
                 bw ? "seconds the whole command may take (default 120; a day with "
                      "--run_infinitely)"
                    : "seconds the whole command may take (default 120)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_flag("-F,--CPU-freq", o.cpu_freq,
               "accepted for perftest compatibility and ignored: perftest's flag silences its "
               "CPU-frequency warning; here 'rdmacheck doctor' reports the governor");
  app.add_option(
         "--output", o.output,
         "print only this figure, one number per size, for scripts, as perftest 4.5 does: " +
             std::string(bw ? "bandwidth (MiB/s; Gb/s with --report_gbits) | message_rate (Mpps)"
                            : "latency (the average, us)"))
      ->check(CLI::IsMember(bw ? std::vector<std::string>{"bandwidth", "message_rate"}
                               : std::vector<std::string>{"latency"}));
  add_output_flags(app, o.out, "print the report as JSON");
  app.add_flag("--out_json,--out-json", o.out_json,
               "accepted for perftest compatibility: --out_json_file FILE writes the JSON file");
  app.footer(
      "Exit status: 0 measured, 1 measured with warnings, 2 failed or bad options.\n"
      "perftest's flags, their meaning here and the few differences: docs/performance.md\n"
      "(installed in /usr/share/doc/rdmacheck/).");
}

// The options of both commands; bw's posting knobs only where they mean something.
void declare(CLI::App& app, PerfOpts& o, bool bw) {
  declare_test(app, o, bw);
  declare_queues(app, o, bw);
  declare_report(app, o, bw);
}

// The spec the options describe, or the one-line reason they contradict each other.
std::optional<std::string> resolve(const PerfOpts& o, const CLI::App& app, perf::PerfOptions& p) {
  const bool bw = p.spec.kind == perf::Kind::kBw;
  if (p.target.host.empty()) {
    return fmt::format(
        "a HOST is required: `rdmacheck serve` is the server side: run it on the other host, "
        "then `rdmacheck {} HOST` here",
        bw ? "bw" : "lat");
  }
  if (p.target.tos >= 0 && !p.cm) {
    return "-T/--tos is the ToS of an rdma_cm connection, as perftest's (with -R): add -R/--cm, "
           "or give the traffic class of the QPs with --tclass";
  }
  std::string op_name = o.op;
  // perftest's ib_send_bw is the only bw test over UD: -c UD means send.
  if (bw && app.count("--op") == 0 && (o.transport == "UD" || o.transport == "ud")) {
    op_name = "send";
  }
  auto op = parse_enum<perf::Op>(op_name);
  std::string t = o.transport;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto transport = parse_enum<proto::Transport>(t);
  if (!op) return "unknown --op '" + op_name + "'";
  if (!transport) return "unknown transport '" + o.transport + "' (RC, UC or UD)";
  if (o.all && !o.sizes.empty()) return "give -a or -s, not both";
  if (o.out_json && o.out.json_file.empty()) {
    return "--out_json writes a file here: add --out_json_file FILE (or --json for stdout)";
  }
  if (!o.output.empty() && o.out.json) return "give --output or --json, not both";
  p.spec.op = *op;
  p.spec.transport = *transport;
  // Fewer completions to reap per message is how perftest reaches line rate.
  if (bw && o.cq_mod != 0) {
    // perftest's -Q: above the depth it is the depth; otherwise the depth
    // grows to a multiple of it, so every signal covers the same N.
    p.spec.cq_mod = std::min(o.cq_mod, p.spec.tx_depth);
    const uint32_t rounded = (p.spec.tx_depth + p.spec.cq_mod - 1) / p.spec.cq_mod * p.spec.cq_mod;
    if (rounded <= proto::kMaxDepth) {
      p.spec.tx_depth = rounded;
    } else {
      p.spec.cq_mod = std::gcd(p.spec.tx_depth, p.spec.cq_mod);
    }
  } else if (bw) {
    p.spec.cq_mod = std::gcd(p.spec.tx_depth, 64u);
  }
  if (o.all) {
    p.spec.sizes =
        perf::is_atomic(*op) ? std::vector<uint32_t>{perf::kAtomicSize} : perf::all_sizes();
  } else if (!o.sizes.empty()) {
    p.spec.sizes = o.sizes;
    std::sort(p.spec.sizes.begin(), p.spec.sizes.end());
    p.spec.sizes.erase(std::unique(p.spec.sizes.begin(), p.spec.sizes.end()), p.spec.sizes.end());
  } else {
    p.spec.sizes = {perf::is_atomic(*op) ? perf::kAtomicSize : (bw ? 65536u : 2u)};
  }
  // perftest's --run_infinitely reports every -D seconds (5 by default).
  if (p.spec.run_infinitely && p.spec.duration_s <= 0) p.spec.duration_s = 5;
  if (p.spec.duration_s > 0) {
    if (o.iterations != 0) return "give -n or -D, not both";
    p.spec.iterations = 0;
  } else {
    p.spec.iterations = o.iterations != 0 ? o.iterations : (bw ? 5000 : 1000);
  }
  if (auto why = perf::validate(p.spec)) return why;
  if (!p.target.src.empty() && !p.cm) {
    return "--src chooses the address rdma_cm resolves from; add --cm";
  }
  if (p.cm && *transport != proto::Transport::kRc) {
    return "--cm connects RC queue pairs: drop -c UC/UD";
  }
  if (p.cm && p.target.path_mtu != 0) {
    return "-m sets the MTU of QPs connected over TCP; rdma_cm takes the route's: drop --cm";
  }
  if (o.ack_timeout != 0) p.ack_timeout = static_cast<uint8_t>(o.ack_timeout);
  const bool forever = p.spec.run_infinitely && app.count("--timeout") == 0;
  p.timeout =
      std::chrono::milliseconds(static_cast<int64_t>((forever ? 86400 : o.timeout_s) * 1000));
  return std::nullopt;
}

Runner attach_perf(CLI::App& app, perf::Kind kind) {
  auto o = std::make_shared<PerfOpts>();
  o->p.spec.kind = kind;
  declare(app, *o, kind == perf::Kind::kBw);
  return [o, &app]() {
    perf::PerfOptions p = o->p;
    if (auto why = resolve(*o, app, p)) return usage_error(app, *why);
    // The live lines of --run_infinitely go to stdout unless a document or
    // the figures own it; the progress line goes to stderr, and only where
    // someone watches it.
    const bool stdout_free = !o->out.json && o->output.empty();
    if (p.spec.run_infinitely) {
      p.interval = [stdout_free](const std::string& line) {
        std::FILE* f = stdout_free ? stdout : stderr;
        std::fputs(line.c_str(), f);
        std::fflush(f);
      };
    } else if (!o->out.json && ::isatty(STDERR_FILENO) != 0) {
      p.progress = [](const std::string& line) {
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        if (line.empty()) std::fputs("\r", stderr);
        std::fflush(stderr);
      };
    }
    const perf::PerfReport r = perf::run_perf(p, stop_requested());
    // --output prints figures only: a run without them still says why on stderr.
    if (!o->output.empty() && !r.ok)
      std::fprintf(stderr, "rdmacheck %s: %s\n", app.get_name().c_str(), r.error.c_str());
    // --output's stdout is figures only, for scripts: no ticket header above them.
    OutputFlags figures = o->out;
    figures.text_header = false;
    const bool printed =
        o->output.empty()
            ? print(r, o->out)
            : print(perf::FigureView{r, *parse_enum<perf::Figure>(o->output), o->report_gbits},
                    figures);
    return printed ? perf::exit_status(r) : 2;
  };
}

}  // namespace

Runner attach_bw(CLI::App& app) { return attach_perf(app, perf::Kind::kBw); }
Runner attach_lat(CLI::App& app) { return attach_perf(app, perf::Kind::kLat); }

}  // namespace rdmacheck::cli
