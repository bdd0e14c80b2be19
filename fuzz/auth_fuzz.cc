// libFuzzer target for the greeting and key proof (proto/auth.cc, the
// client's half in proto/auth_client.cc): what an unauthenticated peer can
// send before it has proven anything. The input is
// what the peer sends, already on a socketpair when this side starts, and then
// the peer's end closes. The first byte picks the side under test: the server
// with a raw key, the server with none (it still greets), the server with a
// key ring (its greeting, then OpenSSL's TLS 1.3 server reading the bytes),
// the server with certificates (mutual TLS: a client's certificate chain is
// parsed and verified), or the client with a ring line, a raw key or a
// certificate (a fake "server" talking to rdmacheck's client). The
// certificates come from tests/pki/make-test-pki, made once per run. Either side must end in
// bounded time with a value or a typed refusal; a crash, a sanitizer report or
// a hang fails.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "proto/auth.h"

namespace {

// The test PKI's server and client contexts, made once (the openssl CLI).
struct Pki {
  rdmacheck::TlsCerts server;
  rdmacheck::TlsCerts client;
  Pki() {
    char dir[] = "/tmp/rdmacheck-fuzz-pki-XXXXXX";
    if (::mkdtemp(dir) == nullptr) std::abort();
    const std::string d = dir;
    const std::string make = std::string(RDMACHECK_FIXTURES) + "/../pki/make-test-pki " + d;
    if (std::system(make.c_str()) != 0) std::abort();
    auto s = rdmacheck::TlsCertContext::load(
        {d + "/server.pem", d + "/server.key", d + "/ca.pem", d + "/crl.pem"}, true);
    auto c =
        rdmacheck::TlsCertContext::load({d + "/h2.pem", d + "/h2.key", d + "/ca.pem", ""}, false);
    if (!s || !c) std::abort();
    server = *s;
    client = *c;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  if (size < 1 || size > 65536) return 0;  // a socketpair buffer holds it without a reader
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  Channel mine{Fd(sv[0])};
  Fd peer(sv[1]);
  if (::write(peer.get(), data + 1, size - 1) != static_cast<ssize_t>(size - 1)) return 0;
  ::shutdown(peer.get(), SHUT_WR);  // the peer says nothing more; what we send, it never reads
  const proto::Psk key{"fuzz.psk", "0123456789abcdef0123456789abcdef"};
  const Deadline d = deadline_in(std::chrono::milliseconds(200));
  // A key ring line's key: the TLS 1.3 server and client meet these bytes.
  static const auto ring = std::make_shared<const proto::KeyRing>(
      *proto::KeyRing::parse(proto::ring_line("fuzz", "0123456789abcdefghijklmnopqrstuv"), "fuzz"));
  const proto::Psk line{"fuzz.key", "0123456789abcdefghijklmnopqrstuv", "fuzz"};
  static const Pki* pki = new Pki();
  switch (data[0] % 7) {
    case 0:
      (void)proto::greet_client(mine, proto::ServerKeys{{key}, nullptr}, d);
      break;
    case 1:
      (void)proto::greet_client(mine, {}, d);
      break;
    case 2:
      (void)proto::greet_client(mine, proto::ServerKeys{{}, ring}, d);
      break;
    case 3:
      (void)proto::meet_server(mine, line, "fuzz", d);
      break;
    case 5: {
      proto::ServerKeys keys;
      keys.certs = pki->server;
      (void)proto::greet_client(mine, keys, d);
      break;
    }
    case 6:
      (void)proto::meet_server(mine, proto::Psk{"h2.pem", "", "", pki->client}, "h1", d);
      break;
    default:
      (void)proto::meet_server(mine, key, "fuzz", d);
      break;
  }
  return 0;
}
