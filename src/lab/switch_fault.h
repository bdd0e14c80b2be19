// Faults in the lab's switch (the hub), between the hosts: what neither end
// can read in its own qdisc, firewall or link state, as in a real fabric (a
// dirty optic, a switch port that drops under load, a flapping link one hop
// away). Spelled like the host faults with "switch-" in front; the port is
// named by its host (and NIC), optionally one direction of it:
//   switch-loss:PCT@h3          switch-burst-loss:PCT[/BURST]@h3
//   switch-delay:MS[/JITTER]@h3 switch-dup:PCT@h3   switch-corrupt:PCT@h3
//   switch-reorder:PCT[/GAP_MS]@h3                  switch-rate:MBIT@h3
//   switch-maxsize:BYTES@h3     switch-flap:DOWN_S/PERIOD_S@h3
// "@h3-2" is h3's NIC 2; ":in" (towards the host) or ":out" (from it) after
// the port limits it to one direction, both by default. Pure; tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/enum_table.h"
#include "base/result.h"

namespace rdmacheck::lab {

enum class SwitchFaultKind {
  kLoss,       // each frame lost with probability PCT
  kBurstLoss,  // Gilbert-Elliott: losses come in bursts of BURST frames on average
  kDelay,      // each frame held MS +- JITTER (uniform); jitter reorders
  kDup,        // each frame sent twice with probability PCT
  kCorrupt,    // one bit flipped past the Ethernet header (the receiver's checks drop it)
  kReorder,    // each frame held back GAP_MS with probability PCT, so later ones overtake it
  kRate,       // the port drains at MBIT Mbit/s from a finite buffer; beyond it, tail drop
  kMaxSize,    // frames over BYTES (Ethernet header and payload, no FCS) are dropped
  kFlap,       // the port passes nothing for DOWN_S of every PERIOD_S (carrier stays up)
};

// A port's direction, as the host sees it: kIn is towards the host (what it
// receives), kOut is what it sends.
enum class PortDirection { kBoth, kIn, kOut };

}  // namespace rdmacheck::lab

namespace rdmacheck {
template <>
struct EnumNames<lab::SwitchFaultKind> {
  static constexpr std::array<std::pair<lab::SwitchFaultKind, std::string_view>, 9> table{{
      {lab::SwitchFaultKind::kLoss, "switch-loss"},
      {lab::SwitchFaultKind::kBurstLoss, "switch-burst-loss"},
      {lab::SwitchFaultKind::kDelay, "switch-delay"},
      {lab::SwitchFaultKind::kDup, "switch-dup"},
      {lab::SwitchFaultKind::kCorrupt, "switch-corrupt"},
      {lab::SwitchFaultKind::kReorder, "switch-reorder"},
      {lab::SwitchFaultKind::kRate, "switch-rate"},
      {lab::SwitchFaultKind::kMaxSize, "switch-maxsize"},
      {lab::SwitchFaultKind::kFlap, "switch-flap"},
  }};
};
template <>
struct EnumNames<lab::PortDirection> {
  static constexpr std::array<std::pair<lab::PortDirection, std::string_view>, 3> table{{
      {lab::PortDirection::kBoth, "both"},
      {lab::PortDirection::kIn, "in"},
      {lab::PortDirection::kOut, "out"},
  }};
};
}  // namespace rdmacheck

namespace rdmacheck::lab {

struct SwitchFault {
  SwitchFaultKind kind = SwitchFaultKind::kLoss;
  std::string host;  // "h3"
  int nic = 1;       // the host's NIC, 1-based (its wire)
  PortDirection direction = PortDirection::kBoth;
  double percent = 0;      // loss, burst-loss, dup, corrupt, reorder
  double burst = 4;        // burst-loss: mean frames per burst
  double ms = 0;           // delay; reorder: the gap
  double jitter_ms = 0;    // delay
  double mbit = 0;         // rate
  uint64_t max_bytes = 0;  // maxsize
  double down_s = 0;       // flap
  double period_s = 0;     // flap
  // Seconds after the lab's run began (every guest started its run
  // commands): the fault starts at at_s (unset: from the start) and ends at
  // until_s (unset: never).
  std::optional<double> at_s;
  std::optional<double> until_s;
  std::string spec;  // as written, for reports: "switch-loss:5@h3:in"

  // Active at T seconds after the run began (nullopt: it has not begun yet).
  [[nodiscard]] bool active_at(std::optional<double> t) const;
};

[[nodiscard]] inline bool is_switch_fault(std::string_view spec) {
  return spec.substr(0, 7) == "switch-";
}

// Parses "switch-KIND[:ARGS]@HOST[-NIC][:in|:out]" for a lab of HOSTS hosts
// with NICS NICs each; errors name the spelling that was expected.
Result<SwitchFault> parse_switch_fault(const std::string& spec, int hosts, int nics);
// "SECONDS:FAULT" (--fault-at, --fault-until): the seconds and the fault.
Result<std::pair<double, std::string>> parse_timed_fault(const std::string& spec,
                                                         const std::string& option);

}  // namespace rdmacheck::lab
