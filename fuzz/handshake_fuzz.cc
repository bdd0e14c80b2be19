// libFuzzer target for everything the server and client do with bytes a peer
// sent: the frame length check, the JSON decode, and every message parser.
// Built in the sanitizer build by fuzz/run (src/CMakeLists.txt's
// rdmacheck_fuzz_target); CI runs it for a bounded time.
#include <cstdint>
#include <cstring>
#include <string>

#include "net/tcp.h"
#include "proto/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  if (size < 4) return 0;
  uint32_t n = 0;
  std::memcpy(&n, data, 4);
  n = __builtin_bswap32(n);  // network order, as on the wire
  if (!check_frame_length(n)) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 4, std::min<size_t>(size - 4, n));
  auto j = decode_frame_body(body);
  if (!j) return 0;
  // Every parser must either accept with in-range values or refuse with a reason.
  // What a parser accepts, its encoder writes back in a form the parser accepts again.
  if (auto h = proto::parse_hello(*j)) {
    if (h->qp.psn > 0xffffff || h->test.max_size > proto::kMaxMessageSize) __builtin_trap();
    if (!proto::parse_hello(proto::to_json(*h))) __builtin_trap();
  }
  if (auto w = proto::parse_welcome(*j)) {
    if (!proto::parse_welcome(proto::to_json(*w))) __builtin_trap();
  }
  if (auto d = proto::parse_done(*j)) {
    if (!proto::parse_done(proto::to_json(*d))) __builtin_trap();
  }
  if (auto b = proto::parse_bye(*j)) (void)proto::to_json(*b).dump();
  if (auto s = proto::parse_sync(*j)) {
    if (!proto::parse_sync(proto::to_json(*s))) __builtin_trap();
  }
  if (auto r = proto::parse_ready(*j)) {
    if (!proto::parse_ready(proto::to_json(*r))) __builtin_trap();
  }
  (void)proto::parse_doctor_report(*j);
  (void)proto::message_type(*j);
  (void)proto::error_text(*j);
  return 0;
}
