#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "conn/ping.h"
#include "conn/ping_print.h"
#include "output/print.h"

namespace rdmacheck::cli {

namespace {

// -c as perftest takes it, RC or UD; a number is taken for what it likely meant.
CLI::Validator connection_type() {
  return CLI::Validator(
      [](const std::string& v) -> std::string {
        if (v == "RC" || v == "UD" || v == "rc" || v == "ud") return {};
        if (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos) {
          return "-c is the connection type (RC or UD), as in perftest; the number of pings "
                 "is -n N (--count N)";
        }
        return "the connection type is RC or UD";
      },
      "RC|UD");
}

}  // namespace

Runner attach_ping(CLI::App& app) {
  struct Opts {
    conn::PingOptions p;
    bool ud = false;
    std::string connection = "RC";
    OutputFlags out;
    bool no_ladder = false;
    double timeout_s = std::chrono::duration<double>(conn::kPingTimeout).count();
    double ping_timeout_s = 3;
    int ack_timeout = 14;
    int retry = 6;
  };
  auto o = std::make_shared<Opts>();
  add_target_options(app, o->p.target, TargetFlags{.src = true});
  app.add_option("-c,--connection", o->connection,
                 "transport, as perftest's -c: RC, or UD (datagrams up to one MTU)")
      ->check(connection_type())
      ->default_val("RC");
  app.add_flag("--ud", o->ud, "the same as -c UD");
  app.add_flag("--write", o->p.write,
               "RDMA WRITE with immediate instead of SEND (the peer's buffer is written directly)");
  app.add_flag("--cm", o->p.cm,
               "connect through librdmacm (resolve address, route, connect) as rping does, each "
               "event timed; RC send only");
  app.add_option("-n,--count", o->p.count, "number of pings, as perftest's -n")
      ->check(CLI::Range(1, 1000000))
      ->default_val(5);
  app.add_option("--interval", o->p.interval_s, "seconds between pings")
      ->check(CLI::Range(0.0, 60.0))
      ->default_val(0.2);
  app.add_option("-s,--size", o->p.size, "message size; units as typed: 4k, 1M, 64KiB")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(1u, proto::kMaxMessageSize / 2))
      ->default_val(64);
  app.add_flag("--no-ladder", o->no_ladder,
               "skip the size ladder (64 B .. 8 x MTU) that finds path-MTU black holes");
  app.add_option("--timeout", o->timeout_s, "seconds the whole command may take")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  app.add_option("--ping-timeout", o->ping_timeout_s, "seconds one round trip may take")
      ->check(CLI::Range(0.1, 600.0))
      ->default_val(3);
  app.add_option("--ack-timeout", o->ack_timeout,
                 "RC ACK timeout exponent: 4.096 us * 2^N per try (never 0 = infinite; default: "
                 "derived from the TCP round trip)")
      ->check(CLI::Range(1, 31));
  app.add_option("--retry", o->retry, "RC retransmissions before giving up (never 7 = forever)")
      ->check(CLI::Range(0, 6))
      ->default_val(6);
  add_output_flags(app, o->out, "print the report as JSON");
  // Test-only, hidden: the lab proves that a server refuses a hello aimed at another host.
  app.add_option("--forge-gid", o->p.forged_gid, "")->group("");
  // Test-only, hidden: the lab proves that a UD datagram with another Q_Key is dropped.
  app.add_option("--forge-qkey", o->p.forged_qkey, "")->group("");
  app.footer(
      "Exit status: 0 every ping answered, 1 answered with warnings, 2 failed (the findings name "
      "the cause).");
  return [o, &app]() {
    conn::PingOptions p = o->p;
    const bool ud = o->ud || o->connection == "UD" || o->connection == "ud";
    p.transport = ud ? proto::Transport::kUd : proto::Transport::kRc;
    if (p.cm && (ud || p.write))
      return usage_error(app, "--cm pings with RC sends; drop --ud/--write");
    if (ud && p.write) return usage_error(app, "--write needs RC; UD carries only sends");
    p.ladder = !o->no_ladder;
    p.timeout = std::chrono::milliseconds(static_cast<int64_t>(o->timeout_s * 1000));
    p.ping_timeout = std::chrono::milliseconds(static_cast<int64_t>(o->ping_timeout_s * 1000));
    if (app.count("--ack-timeout") > 0) p.ack_timeout = static_cast<uint8_t>(o->ack_timeout);
    p.timing.retry_cnt = static_cast<uint8_t>(o->retry);
    const conn::PingReport r = conn::run_ping(p);
    if (!print(r, o->out)) return 2;
    return conn::exit_status(r);
  };
}

}  // namespace rdmacheck::cli
