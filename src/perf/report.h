// One printer for bw/lat: the report becomes one JSON document, and the text
// table is rendered from that document, so the two cannot drift apart.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/enum_table.h"
#include "base/text_style.h"
#include "perf/client.h"

namespace rdmacheck::perf {

nlohmann::json to_json(const PerfReport& r);
// The local device the run used, for the ticket header (output/print.h); none before one was
// chosen.
inline std::vector<std::string> ticket_devices(const PerfReport& r) {
  return r.local ? std::vector<std::string>{r.local->device} : std::vector<std::string>{};
}
// The perftest-like table plus findings: format_document(to_json(r)).
std::string format_text(const PerfReport& r, const TextStyle& style = {});
// The same text from a to_json document (also a saved --json output), so the
// table and the JSON cannot drift apart.
std::string format_document(const nlohmann::json& doc);

// A bw result's spread: "over 10 intervals of 0.200 s: min 4.90, median
// 5.20, p99 5.40 Gb/s"; "" when it has none (bidirectional, or too short to cut).
std::string spread_text(const BwSample& b);

// --run_infinitely's live line for one interval: "65536 B  11.9 Gb/s ...".
std::string interval_line(uint32_t size, uint64_t msgs, double seconds);

// --output: only one figure per size, one number a line, for scripts (as
// perftest's --output); the JSON document is the whole report still.
enum class Figure { kBandwidth, kLatency, kMessageRate };
struct FigureView {
  const PerfReport& report;
  Figure figure;
  bool gbits = false;  // --report_gbits: bandwidth in Gb/s instead of MiB/s
};
inline nlohmann::json to_json(const FigureView& v) { return to_json(v.report); }
inline std::vector<std::string> ticket_devices(const FigureView& v) {
  return ticket_devices(v.report);
}
inline int exit_status(const FigureView& v) { return exit_status(v.report); }
// As Debian 12's perftest (4.5-0.20) prints them, "%lf": bandwidth in MiB/s
// (2^20 bytes a second; Gb/s with --report_gbits), latency the average in
// microseconds, message_rate in Mpps; nothing when the run failed.
std::string format_text(const FigureView& v, const TextStyle& style = {});

}  // namespace rdmacheck::perf

namespace rdmacheck {
template <>
struct EnumNames<perf::Figure> {
  static constexpr std::array<std::pair<perf::Figure, std::string_view>, 3> table = {{
      {perf::Figure::kBandwidth, "bandwidth"},
      {perf::Figure::kLatency, "latency"},
      {perf::Figure::kMessageRate, "message_rate"},
  }};
};
}  // namespace rdmacheck
