// libFuzzer target for the two firewall readers: what `iptables-save`/`ip6tables-save`
// print (text) and what `nft -j list ruleset` prints (JSON), each parsed and then
// walked for the RoCE v2 path (the same evaluate() the doctor runs). The first
// input byte picks the reader; the rest is the tool's output. Any crash,
// sanitizer report or hang fails.
#include <cstdint>
#include <string>

#include "host/firewall_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck::fw;
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    for (const auto& rs : parse_nft_json(text, {})) (void)evaluate(rs);
  } else {
    (void)evaluate(parse_iptables(text, "iptables"));
  }
  return 0;
}
