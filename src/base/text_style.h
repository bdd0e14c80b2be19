// How a report's text is drawn. Every report type R has the same two printers,
//   nlohmann::json to_json(const R&);
//   std::string format_text(const R&, const TextStyle& = {});
// and output/print.h writes one of them (the iproute2 model: one print call,
// text or JSON, never two code paths in a command).
#pragma once

#include <string>
#include <string_view>

namespace rdmacheck {

// How much a report's text says: --brief (check: the layers and the one
// finding to fix first), the default, or -v (doctor: every fact each check
// read, as ibv_devinfo -v).
enum class Detail { kBrief, kNormal, kVerbose };

struct TextStyle {
  bool color = false;  // ANSI colours for statuses (only on a terminal)
  Detail detail = Detail::kNormal;
};

// What a status word means to the eye: pass, warn, fail, not run.
enum class Tone { kGood, kWarn, kBad, kMuted };

// S in bold green, yellow, red or grey when STYLE has colour; else S as it is.
inline std::string paint(std::string_view s, Tone tone, const TextStyle& style) {
  if (!style.color) return std::string(s);
  const char* code = tone == Tone::kGood   ? "32"
                     : tone == Tone::kWarn ? "33"
                     : tone == Tone::kBad  ? "31"
                                           : "90";
  return std::string("\033[1;") + code + "m" + std::string(s) + "\033[0m";
}

}  // namespace rdmacheck
