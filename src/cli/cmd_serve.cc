#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "serve/server.h"

namespace rdmacheck::cli {

Runner attach_serve(CLI::App& app) {
  struct Opts {
    serve::ServerOptions s;
    double session_timeout_s = 120;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("-b,--bind", o->s.bind, "address to listen on (default: all)");
  app.add_option("-p,--port", o->s.tcp_port, "TCP port to listen on")
      ->default_val(proto::kDefaultPort);
  add_device_options(app, o->s.dev, TargetFlags{.short_ib_port = true});
  app.add_option("--max-sessions", o->s.max_sessions, "sessions served at once")
      ->check(CLI::Range(1, 1024))
      ->default_val(16);
  app.add_option("--max-bytes", o->s.max_bytes, "bytes a session may register")
      ->check(CLI::Range(4096u, proto::kMaxMessageSize))
      ->default_val(proto::kMaxMessageSize);
  app.add_option("--session-timeout", o->session_timeout_s, "seconds a session may last")
      ->check(CLI::Range(1.0, 86400.0))
      ->default_val(120);
  app.add_option("--exit-after", o->s.exit_after, "stop after N sessions (0: run until stopped)")
      ->check(CLI::Range(0, 1000000))
      ->default_val(0);
  app.footer(
      "Logs one line per session start and end to stderr. Stops on SIGINT/SIGTERM.\n"
      "Exit status: 0 after a clean stop, 2 when the port cannot be bound.");
  return [o]() {
    serve::ServerOptions s = o->s;
    s.session_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(o->session_timeout_s * 1000));
    return serve::run_server(s, stop_requested(), stderr);
  };
}

}  // namespace rdmacheck::cli
