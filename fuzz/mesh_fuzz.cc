// libFuzzer target for what one mesh rank sends another (a probe's result
// with its findings, mesh/probe_result.cc): the JSON decode, then
// probe_from_json and finding_from_json; what is accepted is written back and
// must be accepted again.
#include <cstdint>
#include <string>

#include "mesh/probe_result.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  if (auto p = mesh::probe_from_json(j)) {
    if (!mesh::probe_from_json(mesh::to_json(*p))) __builtin_trap();
  }
  if (auto f = finding_from_json(j)) (void)to_json(*f).dump();
  return 0;
}
