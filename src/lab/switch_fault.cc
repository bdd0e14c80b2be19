#include "lab/switch_fault.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "lab/plan.h"

namespace rdmacheck::lab {
namespace {

// "5" or "2.5": a finite number, nothing after it.
std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "A/B" -> {A, B}; "A" -> {A, nullopt}.
struct Args {
  std::optional<double> first;
  std::optional<double> second;
  bool has_second = false;
};

Args split_args(const std::string& arg) {
  Args a;
  const auto slash = arg.find('/');
  a.first = number(arg.substr(0, slash));
  if (slash != std::string::npos) {
    a.has_second = true;
    a.second = number(arg.substr(slash + 1));
  }
  return a;
}

// What each kind takes, for the error that names the expected spelling.
std::string_view usage(SwitchFaultKind k) {
  switch (k) {
    case SwitchFaultKind::kLoss:
      return "switch-loss:PCT (0 < PCT <= 100)";
    case SwitchFaultKind::kBurstLoss:
      return "switch-burst-loss:PCT[/BURST] (0 < PCT < 100, BURST >= 1 frames on average)";
    case SwitchFaultKind::kDelay:
      return "switch-delay:MS[/JITTER_MS] (0 < MS, 0 <= JITTER <= MS)";
    case SwitchFaultKind::kDup:
      return "switch-dup:PCT (0 < PCT <= 100)";
    case SwitchFaultKind::kCorrupt:
      return "switch-corrupt:PCT (0 < PCT <= 100)";
    case SwitchFaultKind::kReorder:
      return "switch-reorder:PCT[/GAP_MS] (0 < PCT <= 100, GAP_MS > 0, default 2)";
    case SwitchFaultKind::kRate:
      return "switch-rate:MBIT (0.01 <= MBIT <= 100000)";
    case SwitchFaultKind::kMaxSize:
      return "switch-maxsize:BYTES (60 <= BYTES <= 65535)";
    case SwitchFaultKind::kFlap:
      return "switch-flap:DOWN_S/PERIOD_S (0 < DOWN_S < PERIOD_S <= 3600)";
  }
  return "?";
}

bool percent_ok(std::optional<double> p) { return p && *p > 0 && *p <= 100; }

// Fills the kind's arguments from ARG; false when they are not its spelling.
bool fill(SwitchFault& f, const std::string& arg) {
  const Args a = split_args(arg);
  switch (f.kind) {
    case SwitchFaultKind::kLoss:
    case SwitchFaultKind::kDup:
    case SwitchFaultKind::kCorrupt:
      if (a.has_second || !percent_ok(a.first)) return false;
      f.percent = *a.first;
      return true;
    case SwitchFaultKind::kBurstLoss:
      if (!percent_ok(a.first) || *a.first >= 100) return false;
      if (a.has_second && (!a.second || *a.second < 1)) return false;
      f.percent = *a.first;
      if (a.second) f.burst = *a.second;
      return true;
    case SwitchFaultKind::kDelay:
      if (!a.first || *a.first <= 0) return false;
      if (a.has_second && (!a.second || *a.second < 0 || *a.second > *a.first)) return false;
      f.ms = *a.first;
      f.jitter_ms = a.second.value_or(0);
      return true;
    case SwitchFaultKind::kReorder:
      if (!percent_ok(a.first)) return false;
      if (a.has_second && (!a.second || *a.second <= 0)) return false;
      f.percent = *a.first;
      f.ms = a.second.value_or(2);
      return true;
    case SwitchFaultKind::kRate:
      if (a.has_second || !a.first || *a.first < 0.01 || *a.first > 100000) return false;
      f.mbit = *a.first;
      return true;
    case SwitchFaultKind::kMaxSize:
      if (a.has_second || !a.first || *a.first < 60 || *a.first > 65535 ||
          *a.first != std::floor(*a.first))
        return false;
      f.max_bytes = static_cast<uint64_t>(*a.first);
      return true;
    case SwitchFaultKind::kFlap:
      if (!a.first || !a.second || *a.first <= 0 || *a.second <= *a.first || *a.second > 3600)
        return false;
      f.down_s = *a.first;
      f.period_s = *a.second;
      return true;
  }
  return false;
}

}  // namespace

bool SwitchFault::active_at(std::optional<double> t) const {
  if (at_s && (!t || *t < *at_s)) return false;
  if (until_s && t && *t >= *until_s) return false;
  return true;
}

Result<SwitchFault> parse_switch_fault(const std::string& spec, int hosts, int nics) {
  const auto at = spec.find('@');
  if (at == std::string::npos) {
    return plain_error("--fault", fmt::format("'{}': a switch fault names its port: @HOST, "
                                              "@HOST-NIC, optionally :in or :out, e.g. "
                                              "switch-loss:1@h2 or switch-loss:1@h2-1:in",
                                              spec));
  }
  std::string name = spec.substr(0, at);
  std::string port = spec.substr(at + 1);
  std::string arg;
  if (const auto colon = name.find(':'); colon != std::string::npos) {
    arg = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  const auto kind = parse_enum<SwitchFaultKind>(name);
  if (!kind) {
    return plain_error("--fault", fmt::format("unknown switch fault '{}': choose {}", name,
                                              enum_choices<SwitchFaultKind>(", ")));
  }
  SwitchFault f;
  f.kind = *kind;
  f.spec = spec;
  if (const auto colon = port.find(':'); colon != std::string::npos) {
    const auto dir = parse_enum<PortDirection>(port.substr(colon + 1));
    if (!dir || *dir == PortDirection::kBoth) {
      return plain_error("--fault", fmt::format("'{}': the direction after the port is :in "
                                                "(towards the host) or :out (from it)",
                                                spec));
    }
    f.direction = *dir;
    port = port.substr(0, colon);
  }
  auto target = parse_nic_target(port, hosts, nics);
  if (!target) return target.error();
  f.host = target->host;
  f.nic = target->nic == 0 ? 1 : target->nic;
  if (!fill(f, arg)) {
    return plain_error("--fault", fmt::format("'{}': expected {}", spec, usage(f.kind)));
  }
  return f;
}

Result<std::pair<double, std::string>> parse_timed_fault(const std::string& spec,
                                                         const std::string& option) {
  const auto colon = spec.find(':');
  const auto secs = colon == std::string::npos ? std::nullopt : number(spec.substr(0, colon));
  if (!secs || *secs < 0 || *secs > 86400 || colon + 1 >= spec.size()) {
    return plain_error(option, fmt::format("'{}': expected SECONDS:FAULT, e.g. {} "
                                           "10:switch-loss:5@h2 (seconds after the test began)",
                                           spec, option));
  }
  return std::pair<double, std::string>{*secs, spec.substr(colon + 1)};
}

}  // namespace rdmacheck::lab
