// How a report's text is drawn. Every report type R has the same two printers,
//   nlohmann::json to_json(const R&);
//   std::string format_text(const R&, const TextStyle& = {});
// and cli/print.h writes one of them (the iproute2 model: one print call,
// text or JSON, never two code paths in a command).
#pragma once

namespace rdmacheck {

// How much a report's text says: --brief (check: the layers and the one
// finding to fix first), the default, or -v (doctor: every fact each check
// read, as ibv_devinfo -v).
enum class Detail { kBrief, kNormal, kVerbose };

struct TextStyle {
  bool color = false;  // ANSI colours for statuses (only on a terminal)
  Detail detail = Detail::kNormal;
};

}  // namespace rdmacheck
