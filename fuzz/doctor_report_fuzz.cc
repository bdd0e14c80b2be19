// libFuzzer target for the doctor report a peer sends (check's layer 1 reads
// the server's): the JSON decode and parse_doctor_report, whose findings are
// then rendered as check renders them. Inputs are the JSON body only.
#include <cstdint>
#include <string>

#include "findings/finding.h"
#include "net/tcp.h"
#include "proto/messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmacheck;
  const std::string body(reinterpret_cast<const char*>(data), size);
  auto j = decode_frame_body(body);
  if (!j) return 0;
  auto report = proto::parse_doctor_report(*j);
  if (!report) return 0;
  (void)to_json(report->findings).dump();
  for (const auto& f : report->findings) (void)format_finding(f);
  return 0;
}
