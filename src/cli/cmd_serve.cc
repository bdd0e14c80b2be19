#include <csignal>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/target_options.h"
#include "conn/traffic_cap.h"
#include "net/ip_match.h"
#include "proto/auth.h"
#include "proto/key_ring.h"
#include "serve/server.h"

namespace rdmacheck::cli {
namespace {

std::atomic<bool> g_serve_reload{false};
extern "C" void on_serve_hup(int /*sig*/) { g_serve_reload.store(true); }

// What the command line sets, before the runner checks and loads it.
struct ServeOpts {
  serve::ServerOptions s;
  double session_timeout_s = 120;
  std::vector<std::string> psk_files;
  TlsCertFiles tls;
  std::vector<std::string> allow;
  bool no_share_doctor = false;
  uint32_t max_pinned_mib = 0;  // 0: the default budget
  std::string max_rate = "64G/120s";
};

// Who may use the server: keys, certificates, addresses and names.
void add_access_options(CLI::App& app, ServeOpts* o) {
  auto* psk = app.add_option(
      "--psk-file", o->psk_files,
      "the key ring clients prove their identity's key from (TLS 1.3; `rdmacheck keygen NAME "
      "--ring FILE` adds a client; SIGHUP re-reads; repeatable, identities merged). A raw key "
      "file (the older form: a challenge-response, then frames in clear) works too, twice while "
      "rolling it");
  auto* cert = app.add_option("--tls-cert", o->tls.cert,
                              "certificate mode instead of keys (mutual TLS 1.3): this server's "
                              "certificate (PEM, then its chain); clients verify it against their "
                              "--tls-ca and the name they dialled")
                   ->excludes(psk);
  app.add_option("--tls-key", o->tls.key, "the private key of --tls-cert (PEM)")->needs(cert);
  app.add_option("--tls-ca", o->tls.ca,
                 "the CA whose clients are admitted (PEM); the identity is the client "
                 "certificate's CN")
      ->needs(cert);
  app.add_option("--tls-crl", o->tls.crl,
                 "revoked client certificates (PEM CRL of --tls-ca); SIGHUP re-reads it")
      ->needs(cert);
  cert->needs(app.get_option("--tls-key"))->needs(app.get_option("--tls-ca"));
  app.add_option("--allow", o->allow,
                 "admit only clients from this address or network (IPv4 or IPv6, "
                 "e.g. 10.0.0.0/8, fd00::/8, 198.18.0.2); repeatable. Checked at accept, for TCP "
                 "and rdma_cm, before any key");
  app.add_option("--allow-identity", o->s.allow_identities,
                 "with certificates: admit only clients whose certificate CN is NAME "
                 "(repeatable; default: any the CA signed and the CRL leaves). A key ring is "
                 "its own list of identities")
      ->needs(cert);
  app.add_option("--server-name", o->s.server_names,
                 "with a key ring: a name clients dial this server by (repeatable; its own "
                 "addresses always count). A client that dialled another name (TLS SNI) is "
                 "refused in the TLS handshake, so a connection relayed from another server of "
                 "the fleet fails. Default: any name")
      ->needs(psk)
      ->excludes(cert);
  app.add_flag("--insecure", o->s.insecure,
               "serve without a key and without --allow: anyone who reaches the port may run "
               "tests and read the doctor report")
      ->excludes(psk)
      ->excludes(cert);
  app.add_flag("--no-share-doctor", o->no_share_doctor,
               "refuse doctor requests (the host's name, kernel, GIDs, firewall rules) and "
               "leave the firewall out of failed tests' byes");
}

// How much of the host the server gives away, and for how long.
void add_bound_options(CLI::App& app, ServeOpts* o) {
  app.add_option("--max-sessions", o->s.limits.sessions, "sessions served at once")
      ->check(CLI::Range(1, 1024))
      ->default_val(16);
  app.add_option("--max-sessions-per-address", o->s.limits.sessions_per_source,
                 "sessions served at once to one client address")
      ->check(CLI::Range(1, 1024))
      ->default_val(4);
  app.add_option("--max-sessions-per-identity", o->s.limits.sessions_per_identity,
                 "sessions served at once to one key ring identity")
      ->check(CLI::Range(1, 1024))
      ->default_val(8);
  app.add_option("--max-probes", o->s.limits.probes,
                 "monitor probes served at once, in slots of their own apart from "
                 "--max-sessions (a probe is a small ping from `rdmacheck monitor`)")
      ->check(CLI::Range(1, 4096))
      ->default_val(128);
  app.add_option("--max-probes-per-address", o->s.limits.probes_per_source,
                 "monitor probes served at once to one client address")
      ->check(CLI::Range(1, 4096))
      ->default_val(4);
  app.add_option("--max-handshakes", o->s.limits.startups,
                 "connections still in their handshake (key proof and first request), counted "
                 "apart from sessions, as sshd's MaxStartups")
      ->check(CLI::Range(1, 4096))
      ->default_val(32);
  app.add_option("--max-handshakes-per-address", o->s.limits.startups_per_source,
                 "connections from one address still in their handshake (one /24 or /64 fills "
                 "at most three quarters of --max-handshakes)")
      ->check(CLI::Range(1, 4096))
      ->default_val(4);
  app.add_option("--max-pinned", o->max_pinned_mib,
                 "MiB of test buffers all sessions together may register (both halves of each); "
                 "default: a sixteenth of the memory, at most 2 GiB and RLIMIT_MEMLOCK")
      ->check(CLI::Range(1u, 1u << 22));
  app.add_option("--max-bytes", o->s.max_bytes, "bytes a session may register")
      ->check(CLI::Range(4096u, proto::kMaxMessageSize))
      ->default_val(proto::kMaxMessageSize);
  app.add_option("--max-rate", o->max_rate,
                 "what the server sends itself (ping and lat echoes, bw -b's direction), as "
                 "BYTES/SECONDS: each session at most BYTES and for at most SECONDS, all sessions "
                 "together at most BYTES per SECONDS")
      ->default_val("64G/120s");
  app.add_option("--session-timeout", o->session_timeout_s, "seconds a session may last")
      ->check(CLI::Range(1.0, 86400.0))
      ->default_val(120);
  auto* exit_after = app.add_option("--exit-after", o->s.exit_after,
                                    "stop after N sessions past the handshake (0: run until "
                                    "stopped)")
                         ->check(CLI::Range(0, 1000000))
                         ->default_val(0);
  app.add_flag("--one-off", o->s.one_off,
               "serve one client past the handshake (a port scan, a refused address or a "
               "client without the key does not count) and exit with its status")
      ->excludes(exit_after);
}

constexpr const char* kServeFooter =
    "Who may use the server: every client proves its key (--psk-file) or certificate\n"
    "(--tls-cert), or comes from an\n"
    "--allow'ed network, or both; without either, serve starts only with --insecure.\n"
    "One key per client, in a key ring (TLS 1.3, every frame encrypted and authenticated):\n"
    "  rdmacheck keygen client1 --ring /etc/rdmacheck/ring > client1.key   (on the server)\n"
    "  copy client1.key to client1 (mode 600); there: --psk-file client1.key\n"
    "Revoke: delete the client's line from the ring, then kill -HUP the server: it is refused\n"
    "from its next connection on. A key file that group or others may read is refused.\n"
    "With a PKI instead: --tls-cert, --tls-key, --tls-ca (and --tls-crl; SIGHUP re-reads):\n"
    "mutual TLS; clients give theirs with the same options and check the server's name.\n"
    "The server connects a session's QP only to the GID of the client's own address, so no\n"
    "client can aim its traffic at another host.\n"
    "Bounds: --max-handshakes connections may be in their handshake at once (a few per\n"
    "address, the last quarter kept for other /24s and /64s), apart from --max-sessions\n"
    "running sessions (a few per address and per identity) and --max-probes monitor\n"
    "probes (slots of their own: probes never keep a test out); each session's buffer (both\n"
    "halves) counts against --max-pinned. A client over a bound is refused with\n"
    "'server busy: ...', which it reports as server-refused. --one-off and --exit-after\n"
    "count only sessions past the handshake: a port scan never ends the server.\n"
    "Logs who may connect at start, then one line per session start and end, to stderr.\n"
    "Stops on SIGINT/SIGTERM; SIGHUP re-reads the key rings (a ring that fails to read keeps\n"
    "the old one, and the log says why).\n"
    "Exit status: 0 after a clean stop, 2 when the port cannot be bound or the options are\n"
    "refused; with --one-off 0 when the session ended well, 1 otherwise.";

// The key files, rings and certificates into S, or 2 after saying why not.
int load_keys(const ServeOpts& opts, serve::ServerOptions& s) {
  if (opts.psk_files.size() > proto::kMaxServerKeys) {
    std::fprintf(stderr,
                 "rdmacheck serve: at most %zu --psk-file: the current key and the next one\n",
                 proto::kMaxServerKeys);
    return 2;
  }
  std::vector<std::string> rings;
  for (const auto& f : opts.psk_files) {
    auto ring = proto::is_key_ring(f);
    if (!ring) {
      std::fprintf(stderr, "rdmacheck serve: %s\n", ring.error().message().c_str());
      return 2;
    }
    if (*ring) {
      rings.push_back(f);
      continue;
    }
    auto k = proto::load_psk(f);
    if (!k) {
      std::fprintf(stderr, "rdmacheck serve: %s\n", k.error().error.message().c_str());
      return 2;
    }
    // A short or repetitive key falls to an offline search of one recorded
    // handshake: refused here, as a ring's keys are (clients only match it).
    if (auto weak = proto::weak_key(k->key)) {
      std::fprintf(stderr,
                   "rdmacheck serve: key file %s is too weak: %s (rdmacheck keygen NAME --ring "
                   "RING makes a key ring of random keys)\n",
                   f.c_str(), weak->c_str());
      return 2;
    }
    s.keys.push_back(std::move(*k));
  }
  if (!s.server_names.empty() && rings.empty()) {
    std::fprintf(stderr,
                 "rdmacheck serve: --server-name needs a key ring (TLS 1.3 carries the name "
                 "dialled; a raw key file has no TLS): rdmacheck keygen NAME --ring RING\n");
    return 2;
  }
  if (!rings.empty() && !s.keys.empty()) {
    std::fprintf(stderr,
                 "rdmacheck serve: --psk-file: key rings and raw key files cannot be mixed "
                 "(give clients ring lines: rdmacheck keygen NAME --ring RING)\n");
    return 2;
  }
  if (!opts.tls.cert.empty()) {
    auto c = serve::CertStore::load(opts.tls);
    if (!c) {
      std::fprintf(stderr, "rdmacheck serve: %s\n", c.error().message().c_str());
      return 2;
    }
    s.certs = std::move(*c);
  }
  if (!rings.empty()) {
    auto r = proto::KeyRingFiles::load(rings);
    if (!r) {
      std::fprintf(stderr, "rdmacheck serve: %s\n", r.error().message().c_str());
      return 2;
    }
    s.rings = std::move(*r);
  }
  if (s.rings || s.certs) {
    struct sigaction sa {};
    sa.sa_handler = on_serve_hup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, nullptr);
    s.reload = &g_serve_reload;
  }
  return 0;
}

}  // namespace

Runner attach_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOpts>();
  o->s.fs = FsRoot::live();
  app.add_option("--bind", o->s.bind, "address to listen on (default: all)");
  app.add_option("-p,--port", o->s.tcp_port, "TCP port to listen on")
      ->default_val(proto::kDefaultPort);
  add_device_options(app, o->s.dev);
  add_access_options(app, o.get());
  add_bound_options(app, o.get());
  app.footer(kServeFooter);
  return [o, &app]() {
    serve::ServerOptions s = o->s;
    s.session_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(o->session_timeout_s * 1000));
    s.share_doctor = !o->no_share_doctor;
    s.limits.pinned_bytes = static_cast<uint64_t>(o->max_pinned_mib) << 20;
    auto rate = conn::parse_traffic_cap(o->max_rate);
    if (!rate) return usage_error(app, rate.error().message());
    s.max_rate = *rate;
    if (int rc = load_keys(*o, s); rc != 0) return rc;
    for (const auto& a : o->allow) {
      auto c = parse_cidr(a);
      if (!c) {
        std::fprintf(stderr, "rdmacheck serve: %s\n", c.error().message().c_str());
        return 2;
      }
      s.allow.push_back(std::move(*c));
    }
    return serve::run_server(s, stop_requested(), stderr);
  };
}

}  // namespace rdmacheck::cli
