// libFuzzer target for the greeting and key proof (proto/auth.cc): what an
// unauthenticated peer can send before it has proven anything. The input is
// what the peer sends, already on a socketpair when this side starts, and then
// the peer's end closes. The first byte picks the side under test: the server
// with a key, the server with none (it still greets), or the client with a key
// (a fake "server" talking to rdmacheck's client). Either side must end in
// bounded time with a value or a typed refusal; a crash, a sanitizer report or
// a hang fails.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/deadline.h"
#include "base/fd.h"
#include "proto/auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  if (size < 1 || size > 65536) return 0;  // a socketpair buffer holds it without a reader
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  Fd mine(sv[0]);
  Fd peer(sv[1]);
  if (::write(peer.get(), data + 1, size - 1) != static_cast<ssize_t>(size - 1)) return 0;
  ::shutdown(peer.get(), SHUT_WR);  // the peer says nothing more; what we send, it never reads
  const proto::Psk key{"fuzz.psk", "0123456789abcdef0123456789abcdef"};
  const Deadline d = deadline_in(std::chrono::milliseconds(200));
  switch (data[0] % 3) {
    case 0:
      (void)proto::greet_client(mine, std::vector<proto::Psk>{key}, d);
      break;
    case 1:
      (void)proto::greet_client(mine, {}, d);
      break;
    default:
      (void)proto::meet_server(mine, key, d);
      break;
  }
  return 0;
}
