// `rdmacheck serve`: accepts test clients over TCP, each in its own session
// with its own PD, QP and buffer. A client that vanishes, sends garbage or
// stalls costs its own session only; every wait has a deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "base/deadline.h"
#include "base/fd.h"
#include "conn/target.h"
#include "conn/traffic_cap.h"
#include "net/ip_match.h"
#include "proto/auth.h"
#include "proto/key_ring.h"
#include "proto/messages.h"
#include "serve/admission.h"
#include "serve/cert_store.h"
#include "sysfs/fs_root.h"
#include "verbs/qp.h"

namespace rdmacheck::serve {

struct ServerOptions {
  FsRoot fs = FsRoot::none();  // where the doctor, the device facts and the counters are read
  std::string bind;            // "" = all addresses
  uint16_t tcp_port = proto::kDefaultPort;
  conn::DeviceChoice dev;
  Limits limits;                                // handshakes, sessions, pinned memory
  conn::TrafficCap max_rate;                    // what the server sends itself (echoes, -b)
  uint32_t max_bytes = proto::kMaxMessageSize;  // registered per session
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds session_timeout{120000};
  int exit_after = 0;    // stop after this many sessions (0 = never); for scripted use
  bool one_off = false;  // serve one session, exit with its status
  verbs::RcTiming timing;
  // Who may use this server. Without keys it starts only with an allow-list
  // or when told it may run open to all (insecure).
  // Key rings (TLS 1.3, one key per client identity), or raw keys (the
  // clear challenge-response; at most kMaxServerKeys, for rolling), not both.
  std::shared_ptr<proto::KeyRingFiles> rings;
  std::vector<proto::Psk> keys;
  // Certificate mode (mutual TLS), instead of rings or raw keys.
  std::shared_ptr<CertStore> certs;
  // Set (by SIGHUP) to have the rings (or certificates and CRL) re-read; looked at every 200 ms.
  std::atomic<bool>* reload = nullptr;
  std::vector<Cidr> allow;  // empty: every address
  // With a key ring: the names clients may dial this server by (their TLS
  // SNI), besides its own addresses; empty: any name. A client that dialled
  // another name (a connection relayed from another server) is refused.
  std::vector<std::string> server_names;
  // With certificates: the client identities (certificate CNs) admitted; empty: any of the CA.
  std::vector<std::string> allow_identities;
  bool insecure = false;
  bool share_doctor = true;  // answer doctor requests (hostname, GIDs, firewall rules)
  // Told once: the port it listens on (tcp_port 0 = the kernel's pick), or
  // why it will not start. For a caller in the same process (the mesh),
  // which would otherwise have to read "listening" off the log.
  std::function<void(Result<uint16_t>)> on_listening;
  // What a handshake checks clients against now (the rings, certificates and CRL of this moment).
  [[nodiscard]] proto::ServerKeys keys_now() const;
};

// Runs until *stop becomes true (checked at least every 200 ms) or exit_after
// sessions have ended. Returns 0, or 2 when the port cannot be bound or the
// options leave the server open to anyone without saying so (--insecure).
// With one_off: 0 when its session ended well, 1 otherwise.
int run_server(const ServerOptions& o, const std::atomic<bool>& stop, std::FILE* log);

}  // namespace rdmacheck::serve
