#include "perf/units.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <utility>

namespace rdmacheck::perf {
namespace {

// v rounded to three significant digits, so that the unit and the decimals
// are chosen on the figure as printed (0.9996 Mpps is "1.00 Mpps").
double round3(double v) {
  if (v <= 0 || !std::isfinite(v)) return 0;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(v)));
  return std::round(v * scale) / scale;
}

}  // namespace

std::string significant(double v) {
  const double r = round3(v);
  if (r == 0) return "0";
  const int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(r))));
  return fmt::format("{:.{}f}", r, decimals);
}

std::string rate_text(double mpps) {
  static constexpr std::array<std::pair<double, std::string_view>, 3> kUnits = {{
      {1, "Mpps"},
      {1e3, "kpps"},
      {1e6, "pps"},
  }};
  for (const auto& [per_mpps, name] : kUnits) {
    const double v = mpps * per_mpps;
    if (round3(v) >= 1 || name == kUnits.back().second) {
      return fmt::format("{} {}", significant(v), name);
    }
  }
  return {};  // not reached: the last unit takes everything
}

std::string gbps_text(double gbps) { return significant(gbps) + " Gb/s"; }

}  // namespace rdmacheck::perf
