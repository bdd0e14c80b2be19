#include <fmt/core.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>

#include "conn/device_choice.h"
#include "conn/diagnose_rules.h"
#include "host/firewall.h"
#include "net/cert_expiry.h"
#include "sysfs/rdma_sysfs.h"

namespace rdmacheck::conn {

// Why the server would not let this client in (proto/auth.h), and what to do.
namespace {

// What a refusal or a failed greeting means, and what to do: a table keyed by
// the failure, whose texts may name {host}, {port} (the one dialled) and
// {default_port}.
struct AuthText {
  proto::AuthFailure failure;
  FindingId id;
  const char* summary;
  const char* fix;
};

constexpr AuthText kAuthTexts[] = {
    {proto::AuthFailure::kKeyFileUnreadable, FindingId::kAuthKeyFileUnreadable,
     "the key file given by --psk-file (or RDMACHECK_PSK_FILE) cannot be used",
     "give this client's key file: its line of the server's key ring (`rdmacheck keygen NAME "
     "--ring RING` on the server prints it), or the server's raw key file (32..4096 bytes)"},
    {proto::AuthFailure::kKeyFileUnsafe, FindingId::kAuthKeyFileUnsafe,
     "the key file is readable or writable by group or others: refused, as ssh does",
     "chmod 600 the key file (and keep it owned by the user who runs rdmacheck)"},
    {proto::AuthFailure::kRequired, FindingId::kAuthRequired,
     "{host} requires a pre-shared key and this client has none",
     "give --psk-file FILE (or set RDMACHECK_PSK_FILE) with the key the server uses"},
    {proto::AuthFailure::kFailed, FindingId::kAuthFailed, "{host} did not accept this client's key",
     "with a key ring (TLS), the server's log names the cause: an identity it does not hold "
     "(never added, or revoked: add it with `rdmacheck keygen NAME --ring RING`, then kill "
     "-HUP the server) or another key for it (give this client its current line); with "
     "certificates, another CA, expired or revoked (give it a current certificate from the "
     "server's --tls-ca); with a raw key file, use the one the server uses (while keys are "
     "rolled it accepts both)"},
    {proto::AuthFailure::kServerUnproven, FindingId::kAuthServerUnproven,
     "{host} could not prove who it is",
     "make sure the address reaches the right server; with a raw key, that it was given the "
     "same key; with a key ring and a server that was given --server-name, dial one of those "
     "names or one of its addresses (its log's first line lists them), or add this name "
     "there: a name it was given that still fails reached another server (what does the "
     "name resolve to? is something relaying port 4792?); with certificates, connect by a "
     "name its certificate holds (DNS or IP subjectAltName) and give --tls-ca the CA that "
     "signed it"},
    {proto::AuthFailure::kServerUnkeyed, FindingId::kAuthServerUnkeyed,
     "{host} runs without a key, and this client, which has one, will not talk to a server "
     "that cannot prove who it is",
     "start the server with --psk-file, or drop --psk-file / RDMACHECK_PSK_FILE here"},
    {proto::AuthFailure::kNotAllowed, FindingId::kAuthNotAllowed,
     "{host} does not admit this host: its --allow list (or, with certificates, its "
     "--allow-identity list) leaves it out",
     "add this host's address to the server's --allow (with certificates: this client's "
     "certificate CN to its --allow-identity), or test from an admitted host"},
    {proto::AuthFailure::kForeign, FindingId::kNotRdmacheckServe,
     "something on {host}:{port} accepted the connection but is not `rdmacheck serve`: it "
     "answered outside rdmacheck's framing, or closed at once",
     "check -p / the port: `rdmacheck serve` listens on {default_port} unless given -p; on the "
     "server, `ss -ltnp 'sport = :{port}'` names what listens on {port}"},
    {proto::AuthFailure::kSilent, FindingId::kNoGreeting,
     "something on {host}:{port} accepted the connection but sent no greeting: it is not this "
     "version's `rdmacheck serve`, or the path lost everything after the TCP handshake",
     "on the server, `ss -ltnp 'sport = :{port}'` names what listens: another service means "
     "check -p / the port; an rdmacheck older than protocol version 2 (it waits for the "
     "client to speak first) means the same rdmacheck version on both hosts; this "
     "version's `rdmacheck serve` means the path dropped its greeting: run the command "
     "again and watch the link (ping -i 0.2 {host} shows the gaps of a flapping link)"},
};

// kNone, kProtocol: the greeting itself failed.
constexpr AuthText kGreetingFailed = {
    proto::AuthFailure::kProtocol, FindingId::kAuthProtocol,
    "{host} speaks rdmacheck's framing but the greeting failed",
    "run the same rdmacheck version on both hosts; check the server's log"};

}  // namespace

Finding auth_finding(const ConnObservation& o) {
  const AuthText* t = &kGreetingFailed;
  for (const auto& row : kAuthTexts) {
    if (row.failure == o.auth) t = &row;
  }
  auto text = [&](const char* s) {
    return fmt::format(fmt::runtime(s), fmt::arg("host", o.host), fmt::arg("port", o.tcp_port),
                       fmt::arg("default_port", proto::kDefaultPort));
  };
  Finding f = make_finding(t->id, Severity::kFail, Layer::kConnection, text(t->summary));
  f.evidence.push_back(o.error);
  f.fix = text(t->fix);
  return f;
}

std::optional<Finding> certificate_expiry_finding(const std::string& host,
                                                  const std::vector<std::string>& notes) {
  if (notes.empty()) return std::nullopt;
  Finding f = make_finding(
      FindingId::kCertificateExpiring, Severity::kWarn, Layer::kConnection,
      fmt::format("{} of the session to {} end{} within {} days: from then on sessions fail",
                  notes.size() == 1 ? "a certificate" : "certificates", host,
                  notes.size() == 1 ? "s" : "", kRenewDays));
  f.evidence = notes;
  f.fix =
      "renew each certificate named before its date: this client's in the --tls-cert file (read "
      "at each run), the server's in serve's --tls-cert (re-read on SIGHUP)";
  return f;
}

void note_certificate_expiry(const ConnObservation& o, std::vector<Finding>& out) {
  if (auto f = certificate_expiry_finding(o.host, o.cert_expiring)) out.push_back(std::move(*f));
}

}  // namespace rdmacheck::conn
